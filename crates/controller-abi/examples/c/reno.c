/* Reno's window as a netsim controller plugin written in C, against tfrclab_controller.h: ns-2's
 * arithmetic (+1 per ACK in slow start, +1/cwnd in congestion avoidance, halve whole windows),
 * GAIMD(1, 1/2) of crates/controller-template, so that it gives the built-in Reno's results bit
 * for bit (crates/netsim/tests/controller_plugin.rs builds and checks it). Build:
 *
 *     cc -std=c11 -shared -fPIC -O2 -I crates/controller-abi/include \
 *        -o libreno_c.so crates/controller-abi/examples/c/reno.c -lm
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfrclab_controller.h"

/* One instance per sender; Reno keeps no state of its own, but an instance must be non-NULL. */
typedef struct {
    int unused;
} reno;

static void fail(tfrclab_outcome *outcome, const char *text) {
    size_t len = strlen(text);
    if (len > TFRCLAB_MESSAGE_CAPACITY) len = TFRCLAB_MESSAGE_CAPACITY;
    memcpy(outcome->message, text, len);
    outcome->message_len = (uint32_t)len;
    outcome->status = TFRCLAB_OUTCOME_FAIL;
}

static void set(tfrclab_outcome *outcome, double cwnd, double ssthresh) {
    outcome->status = TFRCLAB_OUTCOME_SET;
    outcome->cwnd = cwnd;
    outcome->ssthresh = ssthresh;
}

static void *create(const uint8_t *params, size_t params_len, tfrclab_outcome *outcome) {
    (void)params;
    if (params_len != 0) {
        fail(outcome, "this plugin takes no parameters");
        return NULL;
    }
    reno *r = calloc(1, sizeof *r);
    if (r == NULL) fail(outcome, "out of memory");
    return r;
}

static void destroy(void *controller) { free(controller); }

static void cong_avoid(void *controller, const tfrclab_state *s, const tfrclab_ack *ack,
                       tfrclab_outcome *outcome) {
    (void)controller;
    (void)ack;
    set(outcome, s->cwnd < s->ssthresh ? s->cwnd + 1.0 : s->cwnd + 1.0 / s->cwnd, s->ssthresh);
}

static void ssthresh(void *controller, const tfrclab_state *s, uint32_t code,
                     tfrclab_outcome *outcome) {
    (void)controller;
    if (code > TFRCLAB_REDUCTION_ECN) {
        fail(outcome, "unknown reduction");
        return;
    }
    double half = floor(trunc(s->win) / 2.0);
    double threshold = code == TFRCLAB_REDUCTION_RESTART ? s->ssthresh : half;
    double cwnd = code == TFRCLAB_REDUCTION_RECOVERY || code == TFRCLAB_REDUCTION_ECN ? half : 1.0;
    set(outcome, cwnd, threshold > 2.0 ? threshold : 2.0);
}

static const tfrclab_vtable VTABLE = {
    .abi_version = TFRCLAB_CONTROLLER_ABI_VERSION,
    .create = create,
    .destroy = destroy,
    .pkts_acked = NULL,
    .cong_avoid = cong_avoid,
    .ssthresh = ssthresh,
    .set_state = NULL,
};

const tfrclab_vtable *tfrclab_controller(void) { return &VTABLE; }
