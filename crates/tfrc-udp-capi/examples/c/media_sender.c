/*
 * media_sender: a 30 fps "video" encoder over tfrc-udp's C API whose bitrate follows the
 * allowed rate TFRC gives it.
 *
 * Every 1/fps s it reads the allowed rate X, sizes the frame at X / fps bytes (capped by
 * --max-rate, the encoder's top bitrate), splits it into datagram-sized payloads that each start
 * with the frame header (frame.h), and queues them with a deadline (--deadline-ms): a frame that
 * cannot leave in time is dropped by the transport rather than sent late. Every --gop frames
 * is a key frame, queued at priority 1 (the rest at 0), and a key frame flushes the delta
 * frames still queued: they depend on a picture the receiver will not need any more.
 *
 * At the end it prints one JSON line: frames produced, payloads queued, refused as full,
 * expired, flushed and sent; its highest 100 ms sending rate over the first 2 s and, with
 * --path-rate, that peak over the path's rate (the start-up overshoot); the sending rate over
 * the last half of the run (the steady bitrate). Rates count whole datagrams, header included.
 *
 * Usage: media_sender --peer HOST:PORT [--duration S] [--fps N] [--gop N] [--datagram BYTES]
 *                     [--deadline-ms MS] [--queue N] [--max-rate BPS] [--path-rate BPS]
 *                     [--preset NAME]
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "tfrc_udp.h"

/* The window of the start-up peak, and how long start-up lasts. */
#define PEAK_WINDOW_NS 100000000ull
#define STARTUP_NS 2000000000ull

struct options {
    const char *peer;
    const char *preset;
    double duration_s;
    int fps;
    int gop;
    unsigned datagram;
    double deadline_ms;
    unsigned queue;
    double max_rate_bps;
    double path_rate_bps; /* 0: not given */
};

#define PROGRAM "media_sender"
#define USAGE \
    "usage: media_sender --peer HOST:PORT [--duration S] [--fps N] [--gop N]\n" \
    "                    [--datagram BYTES] [--deadline-ms MS] [--queue N]\n" \
    "                    [--max-rate BPS] [--path-rate BPS] [--preset NAME]\n"
#include "args.h"

static struct options parse(int argc, char **argv) {
    struct options o = {NULL, "rfc5348", 3.0, 30, 30, 1200, 100.0, 1024, 20e6, 0.0};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (i + 1 >= argc) {
            usage("every option takes a value");
        }
        const char *value = argv[++i];
        if (strcmp(flag, "--peer") == 0) {
            o.peer = value;
        } else if (strcmp(flag, "--preset") == 0) {
            o.preset = value;
        } else if (strcmp(flag, "--duration") == 0) {
            o.duration_s = number(flag, value, 0.1, 86400);
        } else if (strcmp(flag, "--fps") == 0) {
            o.fps = (int)number(flag, value, 1, 1000);
        } else if (strcmp(flag, "--gop") == 0) {
            o.gop = (int)number(flag, value, 1, 100000);
        } else if (strcmp(flag, "--datagram") == 0) {
            o.datagram = (unsigned)number(flag, value, TFRC_UDP_HEADER_BYTES + FRAME_HEADER_BYTES + 1, 65507);
        } else if (strcmp(flag, "--deadline-ms") == 0) {
            o.deadline_ms = number(flag, value, 0, 3600e3);
        } else if (strcmp(flag, "--queue") == 0) {
            o.queue = (unsigned)number(flag, value, 1, 65536);
        } else if (strcmp(flag, "--max-rate") == 0) {
            o.max_rate_bps = number(flag, value, 1e3, 1e11);
        } else if (strcmp(flag, "--path-rate") == 0) {
            o.path_rate_bps = number(flag, value, 1e3, 1e11);
        } else {
            char why[128];
            snprintf(why, sizeof why, "unknown option %s", flag);
            usage(why);
        }
    }
    if (o.peer == NULL) {
        usage("--peer is required");
    }
    return o;
}

/* Exits with the library's message if `status` is an error. */
static void check(TfrcUdpStatus status, const char *what) {
    if (status < 0) {
        fprintf(stderr, "media_sender: %s: %s (%s)\n", what, tfrc_udp_last_error(),
                tfrc_udp_status_name(status));
        exit(1);
    }
}

static void sleep_until(uint64_t at_ns) {
    struct timespec ts = {(time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

int main(int argc, char **argv) {
    struct options o = parse(argc, argv);
    if (tfrc_udp_api_version() >> 16 != TFRC_UDP_API_VERSION_MAJOR) {
        fprintf(stderr, "media_sender: built for C API %d, the library is %u\n",
                TFRC_UDP_API_VERSION_MAJOR, tfrc_udp_api_version() >> 16);
        return 1;
    }
    TfrcUdpSender *sender = NULL;
    check(tfrc_udp_sender_open(o.peer, NULL, o.preset, o.datagram, o.queue, &sender), "open");
    size_t max_payload = 0;
    check(tfrc_udp_sender_max_payload(sender, &max_payload), "max_payload");
    uint8_t *packet = calloc(1, max_payload);
    if (packet == NULL) {
        fprintf(stderr, "media_sender: out of memory\n");
        return 1;
    }
    const uint64_t frame_ns = 1000000000ull / (uint64_t)o.fps;
    const uint64_t frames = (uint64_t)llround(o.duration_s * o.fps);
    const int64_t deadline_ns = (int64_t)(o.deadline_ms * 1e6);
    uint64_t produced = 0, key_frames = 0, offered = 0, queued = 0, refused = 0, too_large = 0;
    uint64_t rate_changes = 0, expired_seen = 0;
    double peak_bps = 0.0;
    uint64_t half_ns = 0, half_bytes = 0;
    const uint64_t start = monotonic_ns();
    uint64_t window_start = start, window_bytes = 0;

    for (uint64_t f = 0; f < frames; f++) {
        uint64_t due = start + f * frame_ns;
        sleep_until(due);
        uint64_t now = monotonic_ns();

        /* Read what changed since the last frame: rate changes, expired payloads. */
        TfrcUdpRateChange change;
        while (tfrc_udp_sender_next_rate_change(sender, &change) == TFRC_UDP_STATUS_OK) {
            rate_changes++;
        }
        TfrcUdpExpired gone;
        while (tfrc_udp_sender_next_expired(sender, &gone) == TFRC_UDP_STATUS_OK) {
            expired_seen++;
        }

        /* The sending rate over 100 ms windows during start-up, and the half-way mark. */
        TfrcUdpSenderStats stats;
        check(tfrc_udp_sender_stats(sender, &stats), "stats");
        if (now - window_start >= PEAK_WINDOW_NS) {
            if (window_start - start < STARTUP_NS) {
                double bps = (double)(stats.bytes_sent - window_bytes) * 8e9 /
                             (double)(now - window_start);
                peak_bps = bps > peak_bps ? bps : peak_bps;
            }
            window_start = now;
            window_bytes = stats.bytes_sent;
        }
        if (half_ns == 0 && f >= frames / 2) {
            half_ns = now;
            half_bytes = stats.bytes_sent;
        }

        /* Size the frame at the allowed rate, in whole datagrams, at least one. */
        double rate = 0.0;
        check(tfrc_udp_sender_allowed_rate(sender, &rate), "allowed_rate");
        double budget_bps = fmin(rate * 8.0, o.max_rate_bps);
        double frame_bytes = budget_bps / 8.0 / o.fps;
        uint64_t count = (uint64_t)(frame_bytes / o.datagram);
        count = count < 1 ? 1 : count > 65535 ? 65535 : count;

        bool key = f % (uint64_t)o.gop == 0;
        if (key) {
            check(tfrc_udp_sender_flush_below(sender, 1, NULL), "flush_below");
            key_frames++;
        }
        for (uint64_t i = 0; i < count; i++) {
            struct frame_header h = {(uint32_t)f, (uint16_t)i, (uint16_t)count, due, key};
            frame_header_write(packet, &h);
            memset(packet + FRAME_HEADER_BYTES, (int)(f & 0xff), max_payload - FRAME_HEADER_BYTES);
            /* A frame's payloads expire together: a frame missing a part cannot be decoded. */
            TfrcUdpStatus s = tfrc_udp_sender_send_grouped(sender, packet, max_payload,
                                                           deadline_ns, key ? 1 : 0, (int64_t)f,
                                                           NULL);
            offered++;
            if (s == TFRC_UDP_STATUS_OK) {
                queued++;
            } else if (s == TFRC_UDP_STATUS_QUEUE_FULL) {
                refused++;
            } else if (s == TFRC_UDP_STATUS_PAYLOAD_TOO_LARGE) {
                too_large++;
            } else {
                check(s, "send");
            }
        }
        produced++;
    }

    /* Let the queue drain (at most one deadline), then close. */
    uint64_t drain_until = monotonic_ns() + (uint64_t)deadline_ns + 50000000ull;
    TfrcUdpSenderStats stats;
    do {
        check(tfrc_udp_sender_stats(sender, &stats), "stats");
        if (stats.queued == 0) {
            break;
        }
        sleep_until(monotonic_ns() + 5000000ull);
    } while (monotonic_ns() < drain_until);
    uint64_t end = monotonic_ns();
    check(tfrc_udp_sender_stats(sender, &stats), "stats");
    double steady_bps = half_ns != 0 && end > half_ns
                            ? (double)(stats.bytes_sent - half_bytes) * 8e9 / (double)(end - half_ns)
                            : 0.0;
    TfrcUdpSenderStats last;
    check(tfrc_udp_sender_close(sender, &last), "close");

    printf("{\"role\":\"sender\",\"frames\":%llu,\"key_frames\":%llu,\"payloads_offered\":%llu,"
           "\"payloads_queued\":%llu,"
           "\"refused_full\":%llu,\"too_large\":%llu,\"expired\":%llu,\"expired_seen\":%llu,"
           "\"flushed\":%llu,\"unsent\":%llu,\"sent\":%llu,\"packets_sent\":%llu,"
           "\"bytes_sent\":%llu,\"rate_changes\":%llu,\"duration_s\":%.3f,"
           "\"startup_peak_bps\":%.0f,",
           (unsigned long long)produced, (unsigned long long)key_frames,
           (unsigned long long)offered, (unsigned long long)queued, (unsigned long long)refused,
           (unsigned long long)too_large, (unsigned long long)last.queue_expired,
           (unsigned long long)expired_seen, (unsigned long long)last.queue_flushed,
           (unsigned long long)last.queued, (unsigned long long)last.queue_sent,
           (unsigned long long)last.packets_sent, (unsigned long long)last.bytes_sent,
           (unsigned long long)rate_changes, (double)(end - start) / 1e9, peak_bps);
    if (o.path_rate_bps > 0) {
        printf("\"path_rate_bps\":%.0f,\"startup_overshoot\":%.3f,", o.path_rate_bps,
               peak_bps / o.path_rate_bps);
    } else {
        printf("\"path_rate_bps\":null,\"startup_overshoot\":null,");
    }
    printf("\"steady_bps\":%.0f,\"final_x_bps\":%.0f,\"rtt_ms\":%.3f,\"p\":%.6f,"
           "\"nofeedback_expiries\":%llu}\n",
           steady_bps, last.x_bytes_per_s * 8.0, last.rtt_s * 1e3, last.p,
           (unsigned long long)last.nofeedback_expiries);
    tfrc_udp_sender_free(sender);
    free(packet);
    return 0;
}
