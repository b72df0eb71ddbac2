/* The C ABI of netsim's congestion controller plugins, version 2 (docs/controllers.md, "Native
 * plugins"): the declarations of crates/controller-abi/src/types.rs for a plugin written in C.
 * A plugin is a shared library exporting `tfrclab_controller`, which returns a pointer to a
 * static vtable whose first field is TFRCLAB_CONTROLLER_ABI_VERSION. The sizes asserted below
 * are asserted on the Rust side too, so that the two declarations cannot drift apart. */
#ifndef TFRCLAB_CONTROLLER_H
#define TFRCLAB_CONTROLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TFRCLAB_CONTROLLER_ABI_VERSION 2u

/* Outcome statuses: keep the window, set it, or fail (the run ends with `message`). */
#define TFRCLAB_OUTCOME_KEEP 0u
#define TFRCLAB_OUTCOME_SET 1u
#define TFRCLAB_OUTCOME_FAIL 2u
#define TFRCLAB_MESSAGE_CAPACITY 256

/* Reduction codes (ssthresh) and congestion state codes (set_state). */
#define TFRCLAB_REDUCTION_RECOVERY 0u
#define TFRCLAB_REDUCTION_GO_BACK_N 1u
#define TFRCLAB_REDUCTION_TIMEOUT 2u
#define TFRCLAB_REDUCTION_RESTART 3u
#define TFRCLAB_REDUCTION_ECN 4u
#define TFRCLAB_CA_STATE_OPEN 0u

/* The sender's state at a callback; packets of packet_bytes, seconds. */
typedef struct {
    double now, cwnd, ssthresh, win, srtt;
    uint64_t flight;
    int64_t highest_ack, max_sent;
    uint32_t window, packet_bytes;
    bool in_recovery, first_reduction, after_timeout, app_limited;
} tfrclab_state;

/* An ACK that moved the cumulative ACK forward; rtt_seconds only if has_rtt; ece if it
 * carried ECN-Echo. */
typedef struct {
    uint64_t acked_bytes;
    double rtt_seconds;
    uint32_t acked;
    bool has_rtt, ece;
} tfrclab_ack;

/* What a callback decided, in memory the host owns (status KEEP on entry). */
typedef struct {
    uint32_t status, has_pacing_rate;
    double cwnd, ssthresh, pacing_rate;
    uint32_t message_len;
    uint8_t message[TFRCLAB_MESSAGE_CAPACITY];
} tfrclab_outcome;

typedef void *(*tfrclab_create_fn)(const uint8_t *params, size_t params_len,
                                   tfrclab_outcome *outcome);
typedef void (*tfrclab_destroy_fn)(void *controller);
typedef void (*tfrclab_ack_fn)(void *controller, const tfrclab_state *state,
                               const tfrclab_ack *ack, tfrclab_outcome *outcome);
typedef void (*tfrclab_signal_fn)(void *controller, const tfrclab_state *state, uint32_t code,
                                  tfrclab_outcome *outcome);

/* The callbacks; create, destroy, cong_avoid and ssthresh must not be NULL. */
typedef struct {
    uint32_t abi_version;
    tfrclab_create_fn create;
    tfrclab_destroy_fn destroy;
    tfrclab_ack_fn pkts_acked;
    tfrclab_ack_fn cong_avoid;
    tfrclab_signal_fn ssthresh;
    tfrclab_signal_fn set_state;
} tfrclab_vtable;

_Static_assert(sizeof(tfrclab_state) == 80, "tfrclab_state's layout");
_Static_assert(sizeof(tfrclab_ack) == 24, "tfrclab_ack's layout");
_Static_assert(sizeof(tfrclab_outcome) == 296, "tfrclab_outcome's layout");
_Static_assert(offsetof(tfrclab_outcome, message) == 36, "tfrclab_outcome's layout");
_Static_assert(offsetof(tfrclab_vtable, set_state) == 6 * sizeof(void *), "the vtable's layout");

/* The entry point a plugin defines. */
const tfrclab_vtable *tfrclab_controller(void);

#endif
