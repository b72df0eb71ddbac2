//! The plugin side of the C ABI: `extern "C"` functions, generic over a [`Controller`], that
//! [`export_controller!`](crate::export_controller) puts in a plugin's [`Vtable`]. They turn raw
//! pointers back into references, catch any panic of the controller (unwinding across an
//! `extern "C"` boundary would abort the host), and write the decision into the host's
//! [`Outcome`]. This module is the only place of the crate allowed `unsafe`.

#![allow(unsafe_code)]

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::{
    Ack, CaState, Controller, Decision, Outcome, Params, Reduction, State, Vtable, ABI_VERSION,
    OUTCOME_SET,
};

/// The vtable of controller `T`, at the current [`ABI_VERSION`].
pub const fn vtable<T: Controller>() -> Vtable {
    Vtable {
        abi_version: ABI_VERSION,
        create: Some(create::<T>),
        destroy: Some(destroy::<T>),
        pkts_acked: Some(pkts_acked::<T>),
        cong_avoid: Some(cong_avoid::<T>),
        ssthresh: Some(ssthresh::<T>),
        set_state: Some(set_state::<T>),
    }
}

/// The text of a caught panic's payload.
fn panic_text(payload: &(dyn Any + Send)) -> String {
    let text = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string());
    format!("panicked: {text}")
}

/// Writes `decision` (or the panic that replaced it) into `outcome`.
fn record(outcome: &mut Outcome, decision: std::thread::Result<Decision>) {
    match decision {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(window))) => {
            outcome.status = OUTCOME_SET;
            outcome.cwnd = window.cwnd;
            outcome.ssthresh = window.ssthresh;
            if let Some(rate) = window.pacing_rate {
                outcome.has_pacing_rate = 1;
                outcome.pacing_rate = rate;
            }
        }
        Ok(Err(message)) => outcome.fail(&message),
        Err(payload) => outcome.fail(&panic_text(payload.as_ref())),
    }
}

/// `create` for `T`: parses the parameters and calls [`Controller::new`].
///
/// # Safety
/// `params` points to `params_len` readable bytes (any pointer if 0) and `outcome` to a
/// writable [`Outcome`], as the host guarantees.
unsafe extern "C" fn create<T: Controller>(
    params: *const u8,
    params_len: usize,
    outcome: *mut Outcome,
) -> *mut c_void {
    // SAFETY: the host passes a valid, exclusive pointer to its Outcome for this call.
    let outcome = unsafe { &mut *outcome };
    let bytes: &[u8] = if params_len == 0 {
        &[]
    } else {
        // SAFETY: the host passes `params_len` readable bytes at `params`, alive for the call.
        unsafe { std::slice::from_raw_parts(params, params_len) }
    };
    let made = catch_unwind(|| {
        let text =
            std::str::from_utf8(bytes).map_err(|_| "parameters are not UTF-8".to_string())?;
        let mut params = Params::parse(text)?;
        let controller = T::new(&mut params)?;
        params.finish()?;
        Ok::<T, String>(controller)
    });
    match made {
        Ok(Ok(controller)) => Box::into_raw(Box::new(controller)).cast(),
        Ok(Err(message)) => {
            outcome.fail(&message);
            std::ptr::null_mut()
        }
        Err(payload) => {
            outcome.fail(&panic_text(payload.as_ref()));
            std::ptr::null_mut()
        }
    }
}

/// `destroy` for `T`: drops the instance (a panic in its `Drop` is swallowed: the run is over
/// for it either way).
///
/// # Safety
/// `controller` came from this library's `create::<T>` and is destroyed once.
unsafe extern "C" fn destroy<T: Controller>(controller: *mut c_void) {
    // SAFETY: `controller` is a `Box<T>` leaked by `create::<T>`, not freed before.
    let boxed = unsafe { Box::from_raw(controller.cast::<T>()) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}

/// Runs `callback` on the instance and the state, recording its decision.
///
/// # Safety
/// `controller` came from `create::<T>` and is not in use elsewhere; `state` and `outcome` are
/// valid for the call.
unsafe fn call<T: Controller>(
    controller: *mut c_void,
    state: *const State,
    outcome: *mut Outcome,
    callback: impl FnOnce(&mut T, &State) -> Decision,
) {
    // SAFETY: the host passes its instance pointer exclusively for the call (one sender owns
    // one instance and calls it from one thread at a time) and valid State and Outcome.
    let (controller, state, outcome) =
        unsafe { (&mut *controller.cast::<T>(), &*state, &mut *outcome) };
    // After a panic the instance may be half-updated: the host never calls it again (the run
    // ends), so observing it broken is not possible.
    let decision = catch_unwind(AssertUnwindSafe(|| callback(controller, state)));
    record(outcome, decision);
}

/// `pkts_acked` for `T`.
///
/// # Safety
/// As [`call`], and `ack` is valid for the call.
unsafe extern "C" fn pkts_acked<T: Controller>(
    controller: *mut c_void,
    state: *const State,
    ack: *const Ack,
    outcome: *mut Outcome,
) {
    // SAFETY: the host passes a valid Ack for the call.
    let ack = unsafe { &*ack };
    // SAFETY: forwarded from the host's guarantees.
    unsafe { call::<T>(controller, state, outcome, |c, s| c.pkts_acked(s, ack)) }
}

/// `cong_avoid` for `T`.
///
/// # Safety
/// As [`call`], and `ack` is valid for the call.
unsafe extern "C" fn cong_avoid<T: Controller>(
    controller: *mut c_void,
    state: *const State,
    ack: *const Ack,
    outcome: *mut Outcome,
) {
    // SAFETY: the host passes a valid Ack for the call.
    let ack = unsafe { &*ack };
    // SAFETY: forwarded from the host's guarantees.
    unsafe { call::<T>(controller, state, outcome, |c, s| c.cong_avoid(s, ack)) }
}

/// `ssthresh` for `T`; an unknown reduction code fails.
///
/// # Safety
/// As [`call`].
unsafe extern "C" fn ssthresh<T: Controller>(
    controller: *mut c_void,
    state: *const State,
    code: u32,
    outcome: *mut Outcome,
) {
    // SAFETY: forwarded from the host's guarantees.
    unsafe {
        call::<T>(
            controller,
            state,
            outcome,
            |c, s| match Reduction::from_code(code) {
                Some(reduction) => c.ssthresh(s, reduction),
                None => Err(format!("unknown reduction code {code}")),
            },
        )
    }
}

/// `set_state` for `T`; an unknown state code fails.
///
/// # Safety
/// As [`call`].
unsafe extern "C" fn set_state<T: Controller>(
    controller: *mut c_void,
    state: *const State,
    code: u32,
    outcome: *mut Outcome,
) {
    // SAFETY: forwarded from the host's guarantees.
    unsafe {
        call::<T>(
            controller,
            state,
            outcome,
            |c, s| match CaState::from_code(code) {
                Some(new_state) => c.set_state(s, new_state),
                None => Err(format!("unknown congestion state code {code}")),
            },
        )
    }
}
