/*
 * media_receiver: receives media_sender's frames over tfrc-udp's C API and reassembles them.
 *
 * It prints {"role":"receiver","listening":"ADDR"} once bound (bind port 0 to get a free
 * one), then takes payloads until none came for --idle seconds after the first one, or
 * --duration seconds passed. Each payload's frame header (frame.h) says which frame it belongs
 * to and how many packets the frame has; a frame is complete when all of them arrived.
 *
 * At the end it prints one JSON line: frames complete, incomplete (some packets missing) and
 * missing (no packet at all, below the highest frame seen); payloads received (with those
 * malformed, duplicated, or so late that their frame was already judged: stale); the one-way
 * delay variation of the payloads (arrival minus the sender's timestamp, above its minimum:
 * the two clocks have different origins, so only the variation is meaningful) and of the
 * frames (completion minus capture time, above its minimum), mean and max in ms.
 *
 * Usage: media_receiver [--bind ADDR] [--duration S] [--idle S] [--preset NAME]
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "tfrc_udp.h"

/* Frames tracked at once; a frame this far behind the newest one is judged as it stands. */
#define SLOTS 256
/* The most packets a tracked frame may have (a larger one is counted as malformed). */
#define MAX_PACKETS 4096

struct slot {
    bool used;
    uint32_t frame;
    uint16_t count;
    uint16_t got;
    uint64_t capture_ns;
    uint8_t seen[MAX_PACKETS / 8];
};

/* Running mean and extremes of a delay, in ns (signed: clocks of different origins). */
struct delays {
    uint64_t n;
    double sum;
    int64_t min, max;
};

static void delays_add(struct delays *d, int64_t value) {
    if (d->n == 0 || value < d->min) {
        d->min = value;
    }
    if (d->n == 0 || value > d->max) {
        d->max = value;
    }
    d->sum += (double)value;
    d->n++;
}

/* Mean and max above the minimum, ms. */
static void delays_variation(const struct delays *d, double *mean_ms, double *max_ms) {
    *mean_ms = d->n ? (d->sum / (double)d->n - (double)d->min) / 1e6 : 0.0;
    *max_ms = d->n ? (double)(d->max - d->min) / 1e6 : 0.0;
}

struct tally {
    uint64_t complete, incomplete, frames_seen, malformed, duplicates, stale;
    int64_t highest; /* -1: none yet */
    struct delays frame_delay;
};

static void finish(struct tally *t, struct slot *s) {
    if (!s->used) {
        return;
    }
    if (s->got == s->count) {
        t->complete++;
    } else {
        t->incomplete++;
    }
    s->used = false;
}

#define PROGRAM "media_receiver"
#define USAGE \
    "usage: media_receiver [--bind ADDR] [--duration S] [--idle S] [--preset NAME]\n"
#include "args.h"

static void check(TfrcUdpStatus status, const char *what) {
    if (status < 0) {
        fprintf(stderr, "media_receiver: %s: %s (%s)\n", what, tfrc_udp_last_error(),
                tfrc_udp_status_name(status));
        exit(1);
    }
}

int main(int argc, char **argv) {
    const char *bind = "127.0.0.1:0", *preset = "rfc5348";
    double duration_s = 30.0, idle_s = 1.0;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (i + 1 >= argc) {
            usage("every option takes a value");
        }
        const char *value = argv[++i];
        if (strcmp(flag, "--bind") == 0) {
            bind = value;
        } else if (strcmp(flag, "--preset") == 0) {
            preset = value;
        } else if (strcmp(flag, "--duration") == 0) {
            duration_s = number(flag, value, 0.1, 86400);
        } else if (strcmp(flag, "--idle") == 0) {
            idle_s = number(flag, value, 0.01, 3600);
        } else {
            char why[128];
            snprintf(why, sizeof why, "unknown option %s", flag);
            usage(why);
        }
    }
    if (tfrc_udp_api_version() >> 16 != TFRC_UDP_API_VERSION_MAJOR) {
        fprintf(stderr, "media_receiver: built for C API %d, the library is %u\n",
                TFRC_UDP_API_VERSION_MAJOR, tfrc_udp_api_version() >> 16);
        return 1;
    }
    TfrcUdpReceiver *receiver = NULL;
    check(tfrc_udp_receiver_open(bind, preset, 0, &receiver), "open");
    char addr[64];
    check(tfrc_udp_receiver_local_addr(receiver, addr, sizeof addr), "local_addr");
    printf("{\"role\":\"receiver\",\"listening\":\"%s\"}\n", addr);
    fflush(stdout);

    static struct slot slots[SLOTS];
    struct tally t = {0};
    t.highest = -1;
    struct delays owd = {0};
    size_t capacity = 65536;
    uint8_t *buf = malloc(capacity);
    if (buf == NULL) {
        fprintf(stderr, "media_receiver: out of memory\n");
        return 1;
    }
    uint64_t payloads = 0, bytes = 0, late = 0, gaps = 0;
    const uint64_t start = monotonic_ns();
    const uint64_t stop_at = start + (uint64_t)(duration_s * 1e9);
    const uint64_t idle_ns = (uint64_t)(idle_s * 1e9);
    uint64_t first_ns = 0, last_ns = 0;

    for (;;) {
        uint64_t now = monotonic_ns();
        if (now >= stop_at || (last_ns != 0 && now - last_ns >= idle_ns)) {
            break;
        }
        TfrcUdpDelivery meta;
        TfrcUdpStatus s = tfrc_udp_receiver_recv(receiver, buf, capacity, 100000000, &meta);
        if (s == TFRC_UDP_STATUS_TIMEOUT) {
            continue;
        }
        if (s == TFRC_UDP_STATUS_BUFFER_TOO_SMALL) {
            /* The payload stays pending: grow the buffer and take it at the next call. */
            uint8_t *bigger = realloc(buf, (size_t)meta.len);
            if (bigger == NULL) {
                fprintf(stderr, "media_receiver: out of memory\n");
                return 1;
            }
            buf = bigger;
            capacity = (size_t)meta.len;
            continue;
        }
        check(s, "recv");
        now = monotonic_ns();
        last_ns = now;
        first_ns = first_ns ? first_ns : now;
        payloads++;
        bytes += meta.len;
        late += meta.late;
        gaps += meta.gap;
        delays_add(&owd, (int64_t)(meta.arrival_ns - meta.sent_ns));

        struct frame_header h;
        if (!frame_header_read(buf, meta.len, &h) || h.count > MAX_PACKETS) {
            t.malformed++;
            continue;
        }
        struct slot *slot = &slots[h.frame % SLOTS];
        if (slot->used && slot->frame != h.frame) {
            if ((int64_t)h.frame < (int64_t)slot->frame) {
                t.stale++; /* its frame is older than every one tracked: judged already */
                continue;
            }
            finish(&t, slot);
        }
        if (!slot->used) {
            memset(slot, 0, sizeof *slot);
            slot->used = true;
            slot->frame = h.frame;
            slot->count = h.count;
            slot->capture_ns = h.capture_ns;
            t.frames_seen++;
        }
        if (h.count != slot->count) {
            t.malformed++;
            continue;
        }
        uint8_t bit = (uint8_t)(1u << (h.index % 8));
        if (slot->seen[h.index / 8] & bit) {
            t.duplicates++;
            continue;
        }
        slot->seen[h.index / 8] |= bit;
        slot->got++;
        if (slot->got == slot->count) {
            delays_add(&t.frame_delay, (int64_t)(now - slot->capture_ns));
        }
        if ((int64_t)h.frame > t.highest) {
            t.highest = h.frame;
        }
    }
    for (int i = 0; i < SLOTS; i++) {
        finish(&t, &slots[i]);
    }

    TfrcUdpReceiverStats stats;
    check(tfrc_udp_receiver_close(receiver, &stats), "close");
    double owd_mean, owd_max, frame_mean, frame_max;
    delays_variation(&owd, &owd_mean, &owd_max);
    delays_variation(&t.frame_delay, &frame_mean, &frame_max);
    uint64_t span = last_ns > first_ns ? last_ns - first_ns : 0;
    printf("{\"role\":\"receiver\",\"frames_complete\":%llu,\"frames_incomplete\":%llu,"
           "\"frames_missing\":%llu,\"highest_frame\":%lld,\"payloads\":%llu,\"bytes\":%llu,"
           "\"malformed\":%llu,\"duplicates\":%llu,\"stale\":%llu,\"late\":%llu,"
           "\"gaps\":%llu,"
           "\"packets_lost\":%llu,\"loss_events\":%llu,\"overflow\":%llu,"
           "\"goodput_bps\":%.0f,\"owd_var_mean_ms\":%.3f,\"owd_var_max_ms\":%.3f,"
           "\"frame_delay_var_mean_ms\":%.3f,\"frame_delay_var_max_ms\":%.3f}\n",
           (unsigned long long)t.complete, (unsigned long long)t.incomplete,
           (unsigned long long)(t.highest + 1 - (int64_t)t.frames_seen),
           (long long)t.highest, (unsigned long long)payloads, (unsigned long long)bytes,
           (unsigned long long)t.malformed, (unsigned long long)t.duplicates,
           (unsigned long long)t.stale,
           (unsigned long long)late, (unsigned long long)gaps,
           (unsigned long long)stats.packets_lost, (unsigned long long)stats.loss_events,
           (unsigned long long)stats.overflow,
           span ? (double)bytes * 8e9 / (double)span : 0.0, owd_mean, owd_max, frame_mean,
           frame_max);
    tfrc_udp_receiver_free(receiver);
    free(buf);
    return 0;
}
