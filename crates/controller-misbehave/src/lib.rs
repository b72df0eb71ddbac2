//! A controller plugin that misbehaves on request (a test fixture for
//! `crates/netsim/tests/controller_plugin.rs`): Reno-like AIMD until its `after`-th `cong_avoid`
//! call (parameter, default 100), then what `fail` says: `nan` (a NaN cwnd), `negative` (cwnd
//! -1), `panic`, `error` (an error message) or `hang` (never returns: it sleeps forever, for
//! the watchdog to end); or `new` fails its creation, `new_panic` panics in it.
//! Built with feature `wrong_abi` its vtable claims another ABI version; with `no_entry` it
//! exports no entry point.

use tfrclab_controller_abi::{Ack, Controller, Decision, Params, Reduction, State, Window};

/// The misbehaviour chosen and when.
#[derive(Debug)]
pub struct Misbehave {
    fail: String,
    after: f64,
    calls: f64,
}

impl Controller for Misbehave {
    fn new(params: &mut Params) -> Result<Misbehave, String> {
        let fail = params.str_or("fail", "none");
        let after = params.f64_or("after", 100.0)?;
        match fail.as_str() {
            "new" => Err("refuses to be made".to_string()),
            "new_panic" => panic!("cannot start"),
            _ => Ok(Misbehave {
                fail,
                after,
                calls: 0.0,
            }),
        }
    }

    fn cong_avoid(&mut self, state: &State, _ack: &Ack) -> Decision {
        self.calls += 1.0;
        if self.calls >= self.after {
            match self.fail.as_str() {
                "nan" => return Ok(Some(Window::new(f64::NAN, state.ssthresh))),
                "negative" => return Ok(Some(Window::new(-1.0, state.ssthresh))),
                "panic" => panic!("cong_avoid blew up after {} calls", self.calls),
                "error" => return Err("gave up".to_string()),
                "hang" => loop {
                    std::thread::sleep(std::time::Duration::from_secs(1));
                },
                _ => {}
            }
        }
        let cwnd = if state.cwnd < state.ssthresh {
            state.cwnd + 1.0
        } else {
            state.cwnd + 1.0 / state.cwnd
        };
        Ok(Some(Window::new(cwnd, state.ssthresh)))
    }

    fn ssthresh(&mut self, state: &State, reduction: Reduction) -> Decision {
        let half = (state.win / 2.0).max(2.0);
        Ok(Some(match reduction {
            Reduction::Recovery => Window::new(half, half),
            _ => Window::new(1.0, half),
        }))
    }
}

#[cfg(not(any(feature = "wrong_abi", feature = "no_entry")))]
tfrclab_controller_abi::export_controller!(Misbehave);

/// The vtable of another ABI version (the layout of this one, the version number changed).
#[cfg(all(feature = "wrong_abi", not(feature = "no_entry")))]
static WRONG_VTABLE: tfrclab_controller_abi::Vtable = tfrclab_controller_abi::Vtable {
    abi_version: tfrclab_controller_abi::ABI_VERSION + 1,
    ..tfrclab_controller_abi::ffi::vtable::<Misbehave>()
};

/// The entry point, returning a vtable of the wrong version.
#[cfg(all(feature = "wrong_abi", not(feature = "no_entry")))]
#[allow(unsafe_code)] // `no_mangle`: the one symbol of this name in the library.
#[no_mangle]
pub extern "C" fn tfrclab_controller() -> *const tfrclab_controller_abi::Vtable {
    &WRONG_VTABLE
}
