/*
 * The example's frame header, first in every payload, and a monotonic clock. Both programs of
 * the example include it; the transport never looks inside a payload.
 *
 * Layout (little-endian, 20 bytes): frame number (u32), packet index within the frame (u16),
 * packets in the frame (u16), capture time in ns on the sender's CLOCK_MONOTONIC (u64), flags
 * (u8, bit 0: key frame), 3 bytes of zeros.
 */
#ifndef MEDIA_FRAME_H
#define MEDIA_FRAME_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define FRAME_HEADER_BYTES 20
#define FRAME_FLAG_KEY 1u

/* A frame header, decoded. */
struct frame_header {
    uint32_t frame;
    uint16_t index;
    uint16_t count;
    uint64_t capture_ns;
    bool key;
};

static inline void put_le(uint8_t *out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; i++) {
        out[i] = (uint8_t)(value >> (8 * i));
    }
}

static inline uint64_t get_le(const uint8_t *in, int bytes) {
    uint64_t value = 0;
    for (int i = 0; i < bytes; i++) {
        value |= (uint64_t)in[i] << (8 * i);
    }
    return value;
}

/* Writes `h` into the first FRAME_HEADER_BYTES of `out`. */
static inline void frame_header_write(uint8_t *out, const struct frame_header *h) {
    put_le(out, h->frame, 4);
    put_le(out + 4, h->index, 2);
    put_le(out + 6, h->count, 2);
    put_le(out + 8, h->capture_ns, 8);
    out[16] = h->key ? FRAME_FLAG_KEY : 0;
    out[17] = out[18] = out[19] = 0;
}

/* Reads a header from a payload of `len` bytes; false if it is too short or inconsistent. */
static inline bool frame_header_read(const uint8_t *in, uint64_t len, struct frame_header *h) {
    if (len < FRAME_HEADER_BYTES) {
        return false;
    }
    h->frame = (uint32_t)get_le(in, 4);
    h->index = (uint16_t)get_le(in + 4, 2);
    h->count = (uint16_t)get_le(in + 6, 2);
    h->capture_ns = get_le(in + 8, 8);
    h->key = (in[16] & FRAME_FLAG_KEY) != 0;
    return h->count > 0 && h->index < h->count;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* MEDIA_FRAME_H */
