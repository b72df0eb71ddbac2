//! Waiting for the next deadline or the next datagram, whichever comes first.
//!
//! The wait arms the [`Timer`] at the deadline (absolute, `CLOCK_MONOTONIC`) and polls the
//! socket, the timer and the wake-up fd together. A timerfd still wakes a few tens of
//! microseconds late (more on a loaded machine); with a non-zero `spin` the waiter learns how
//! late (an average of recent wake-ups), arms the timer that much early, at most `spin`, and
//! busy-waits the rest. The `pacing` example measures what this buys (docs/transport.md).

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use rustix::event::{poll, PollFd, PollFlags};
use rustix::io::Errno;
use tfrc::Time;

use crate::clock::Clock;
use crate::timer::Timer;
use crate::wake::Wake;

/// Waits on a socket, a deadline and a wake-up signal.
#[derive(Debug)]
pub struct Waiter {
    timer: Timer,
    spin: Duration,
    /// Average lateness of the timer's wake-ups, nanoseconds (gain 1/8).
    lateness_ns: u64,
}

/// What ended a wait, so the loop makes only the system calls that can find something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Woken {
    /// The socket may hold datagrams (reported readable, or not polled at all).
    pub socket: bool,
    /// The wake-up fd was signalled (and has been cleared).
    pub wake: bool,
}

impl Waiter {
    /// A waiter that may wake up to `spin` early and busy-wait the rest.
    pub fn new(spin: Duration) -> io::Result<Waiter> {
        Ok(Waiter {
            timer: Timer::new()?,
            spin,
            lateness_ns: 0,
        })
    }

    /// How early the timer is armed now: the average lateness, at most `spin`.
    fn early(&self) -> Duration {
        Duration::from_nanos(self.lateness_ns).min(self.spin)
    }

    /// Blocks until `deadline` on `clock`, a datagram on `socket`, or a signal on `wake`.
    pub fn wait_until(
        &mut self,
        clock: &Clock,
        socket: &UdpSocket,
        wake: &Wake,
        deadline: Time,
    ) -> io::Result<Woken> {
        let now = clock.now();
        let unpolled = Woken {
            socket: true,
            wake: false,
        };
        if deadline <= now {
            return Ok(unpolled);
        }
        let sleep_until = deadline - self.early();
        if sleep_until > now {
            self.timer.arm(clock, sleep_until)?;
            let mut fds = [
                PollFd::new(socket, PollFlags::IN),
                PollFd::new(&self.timer, PollFlags::IN),
                PollFd::new(wake, PollFlags::IN),
            ];
            match poll(&mut fds, None) {
                Ok(_) => {}
                // A signal: back to the loop, which looks at its stop flag and re-waits.
                Err(Errno::INTR) => return Ok(unpolled),
                Err(err) => return Err(err.into()),
            }
            let woken = Woken {
                socket: !fds[0].revents().is_empty(),
                wake: !fds[2].revents().is_empty(),
            };
            let fired = !fds[1].revents().is_empty();
            if fired {
                self.timer.expired();
                if !self.spin.is_zero() {
                    let late = clock.now().saturating_since(sleep_until).as_nanos();
                    let late = u64::try_from(late).unwrap_or(u64::MAX);
                    self.lateness_ns = self.lateness_ns - self.lateness_ns / 8 + late / 8;
                }
            }
            if woken.wake {
                wake.clear();
            }
            if woken.socket || woken.wake || !fired {
                // Input, or (never expected) a wake-up with nothing ready: the loop decides.
                return Ok(woken);
            }
        }
        // Only the last `early` before the deadline is busy-waited: bounded by `spin`.
        while clock.now() < deadline {
            std::hint::spin_loop();
        }
        Ok(Woken {
            socket: false,
            wake: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_at_the_deadline_or_on_input() {
        let clock = Clock::new();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        let wake = Wake::new().unwrap();
        let mut waiter = Waiter::new(Duration::from_micros(50)).unwrap();
        for _ in 0..3 {
            let deadline = clock.now() + Duration::from_millis(2);
            let woken = waiter.wait_until(&clock, &socket, &wake, deadline).unwrap();
            assert_eq!((woken.socket, woken.wake), (false, false));
            assert!(clock.now() >= deadline);
        }
        assert!(waiter.early() <= Duration::from_micros(50));

        let far = clock.now() + Duration::from_secs(10);
        let other = UdpSocket::bind("127.0.0.1:0").unwrap();
        other.send_to(b"x", socket.local_addr().unwrap()).unwrap();
        let woken = waiter.wait_until(&clock, &socket, &wake, far).unwrap();
        assert!(woken.socket);
        let mut buf = [0u8; 4];
        socket.recv_from(&mut buf).unwrap();

        wake.notify();
        let woken = waiter.wait_until(&clock, &socket, &wake, far).unwrap();
        assert_eq!((woken.socket, woken.wake), (false, true));
        // The signal was consumed: the next wait sleeps until its deadline.
        let soon = clock.now() + Duration::from_millis(1);
        let woken = waiter.wait_until(&clock, &socket, &wake, soon).unwrap();
        assert!(!woken.wake);
        assert!(clock.now() < far);
    }
}
