/* A test fixture in C for crates/netsim/tests/controller_plugin.rs: what only a plugin that does
 * not use the Rust glue can get wrong. Built with -DNULL_SSTHRESH, its vtable has no ssthresh
 * (refused when loaded); with -DBAD_STATUS, cong_avoid answers an outcome status the ABI does
 * not define (the run ends with the controller's error). Otherwise it behaves as Reno. */
#include <math.h>
#include <stdlib.h>

#include "tfrclab_controller.h"

static void *create(const uint8_t *params, size_t params_len, tfrclab_outcome *outcome) {
    (void)params;
    (void)params_len;
    (void)outcome;
    return malloc(1);
}

static void destroy(void *controller) { free(controller); }

static void cong_avoid(void *controller, const tfrclab_state *s, const tfrclab_ack *ack,
                       tfrclab_outcome *outcome) {
    (void)controller;
    (void)ack;
#ifdef BAD_STATUS
    if (s->highest_ack > 200) {
        outcome->status = 7;
        return;
    }
#endif
    outcome->status = TFRCLAB_OUTCOME_SET;
    outcome->cwnd = s->cwnd < s->ssthresh ? s->cwnd + 1.0 : s->cwnd + 1.0 / s->cwnd;
    outcome->ssthresh = s->ssthresh;
}

#ifndef NULL_SSTHRESH
static void ssthresh(void *controller, const tfrclab_state *s, uint32_t code,
                     tfrclab_outcome *outcome) {
    (void)controller;
    (void)code;
    double half = fmax(floor(s->win / 2.0), 2.0);
    outcome->status = TFRCLAB_OUTCOME_SET;
    outcome->cwnd = half;
    outcome->ssthresh = half;
}
#endif

static const tfrclab_vtable VTABLE = {
    .abi_version = TFRCLAB_CONTROLLER_ABI_VERSION,
    .create = create,
    .destroy = destroy,
    .pkts_acked = NULL,
    .cong_avoid = cong_avoid,
#ifdef NULL_SSTHRESH
    .ssthresh = NULL,
#else
    .ssthresh = ssthresh,
#endif
    .set_state = NULL,
};

const tfrclab_vtable *tfrclab_controller(void) { return &VTABLE; }
