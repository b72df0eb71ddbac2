//! The client end of a web session: the session's page and object schedule (ns-2
//! `WebTrafSession` and `WebPage` in `webcache/webtraf.cc`), its request connections, and the
//! receivers of the responses.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use tfrc::time::duration_from_secs;
use tfrc::Time;

use super::{InterPageFrom, WebConfig};
use crate::agent::tcp_pool::{PoolEvent, TcpPool};
use crate::agent::{Agent, Outbox};
use crate::packet::Packet;
use crate::rng::SimRng;

/// A page being fetched.
#[derive(Debug)]
struct Page {
    objects: u64,
    requested: u64,
    completed: u64,
}

/// A web client (the sink agent of a `web` flow).
#[derive(Debug)]
pub struct WebClient {
    config: WebConfig,
    rng: SimRng,
    pool: TcpPool,
    /// The flow's application is on (between `on_flow_start` and `on_flow_stop`).
    on: bool,
    next_page_at: Option<Time>,
    /// Pages in progress by id, and when each requests its next object.
    pages: BTreeMap<u64, Page>,
    object_timers: BinaryHeap<Reverse<(Time, u64)>>,
    /// The page each open object (connection id) belongs to.
    objects: BTreeMap<u32, u64>,
    next_object: u32,
    pages_started: u64,
    pages_completed: u64,
    objects_completed: u64,
}

impl WebClient {
    /// A client with its own stream, waiting for the flow to start.
    pub fn new(config: &WebConfig, rng: SimRng) -> WebClient {
        WebClient {
            config: *config,
            rng,
            pool: TcpPool::new(&config.tcp),
            on: false,
            next_page_at: None,
            pages: BTreeMap::new(),
            object_timers: BinaryHeap::new(),
            objects: BTreeMap::new(),
            next_object: 0,
            pages_started: 0,
            pages_completed: 0,
            objects_completed: 0,
        }
    }

    fn more_pages(&self) -> bool {
        self.on && self.config.pages.is_none_or(|n| self.pages_started < n)
    }

    fn draw_secs(
        &mut self,
        now: Time,
        which: fn(&WebConfig) -> &crate::randvar::RandomVariable,
    ) -> Time {
        let rv = *which(&self.config);
        now + duration_from_secs(rv.sample(&mut self.rng))
    }

    /// Starts a page (`WebTrafSession::expire`): draws its object count and requests the
    /// first object at once.
    fn start_page(&mut self, now: Time, out: &mut Outbox) {
        let id = self.pages_started;
        self.pages_started += 1;
        let objects = self.config.objects_per_page.sample_count(&mut self.rng);
        self.pages.insert(
            id,
            Page {
                objects,
                requested: 0,
                completed: 0,
            },
        );
        if self.config.inter_page_from == InterPageFrom::Start && self.more_pages() {
            self.next_page_at = Some(self.draw_secs(now, |c| &c.inter_page));
        }
        self.request_object(now, id, out);
    }

    /// Requests the page's next object, and schedules the one after it an inter-object time
    /// later (`WebPage::handle`).
    fn request_object(&mut self, now: Time, page: u64, out: &mut Outbox) {
        let conn = self.next_object;
        if !self.pool.open(now, conn, 1, &mut self.rng, out) {
            // Connection ids used up (2^24 per flow): the session ends.
            self.on = false;
            self.next_page_at = None;
            return;
        }
        self.next_object += 1;
        self.objects.insert(conn, page);
        let Some(p) = self.pages.get_mut(&page) else {
            return;
        };
        p.requested += 1;
        if p.requested < p.objects {
            let at = self.draw_secs(now, |c| &c.inter_object);
            self.object_timers.push(Reverse((at, page)));
        }
    }

    /// A response has fully arrived (`WebPage::doneObject`, `WebTrafSession::donePage`).
    fn object_done(&mut self, now: Time, conn: u32) {
        let Some(page) = self.objects.remove(&conn) else {
            return;
        };
        self.objects_completed += 1;
        let Some(p) = self.pages.get_mut(&page) else {
            return;
        };
        p.completed += 1;
        if p.completed == p.objects {
            self.pages.remove(&page);
            self.pages_completed += 1;
            if self.config.inter_page_from == InterPageFrom::End && self.more_pages() {
                self.next_page_at = Some(self.draw_secs(now, |c| &c.inter_page));
            }
        }
    }
}

impl Agent for WebClient {
    /// `pages_started`, `pages_completed`, `objects_requested`, `objects_completed` (the whole
    /// response arrived), `requests_active` (request connections not yet acked),
    /// `response_packets_delivered` (in order, all responses), `response_bytes_delivered`
    /// (those packets' bytes on the wire): cumulative except `requests_active`.
    fn trace_fields(&self) -> &'static [&'static str] {
        &[
            "pages_started",
            "pages_completed",
            "objects_requested",
            "objects_completed",
            "requests_active",
            "response_packets_delivered",
            "response_bytes_delivered",
        ]
    }

    fn on_start(&mut self, _now: Time, _out: &mut Outbox) {}

    fn on_stop(&mut self, _now: Time, _out: &mut Outbox) {}

    /// The session launches: its first page starts now, and again after an OFF period unless a
    /// page is already due. When pages are spaced from the end of the previous one, a page
    /// still downloading schedules the next itself, so a new one starts now only if none is.
    fn on_flow_start(&mut self, now: Time, _out: &mut Outbox) {
        self.on = true;
        let spaced_from_start = self.config.inter_page_from == InterPageFrom::Start;
        if self.next_page_at.is_none()
            && self.more_pages()
            && (spaced_from_start || self.pages.is_empty())
        {
            self.next_page_at = Some(now);
        }
    }

    /// No more pages; the objects of pages already started are still fetched.
    fn on_flow_stop(&mut self, _now: Time, _out: &mut Outbox) {
        self.on = false;
        self.next_page_at = None;
    }

    fn handle_packet(&mut self, now: Time, packet: &Packet, out: &mut Outbox) {
        if let PoolEvent::Received { conn, .. } = self.pool.handle_packet(now, packet, out) {
            self.object_done(now, conn);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        [
            self.next_page_at,
            self.object_timers.peek().map(|Reverse((at, _))| *at),
            self.pool.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn handle_timeout(&mut self, now: Time, out: &mut Outbox) {
        while let Some(&Reverse((at, page))) = self.object_timers.peek() {
            if at > now {
                break;
            }
            self.object_timers.pop();
            self.request_object(now, page, out);
        }
        if self.next_page_at.is_some_and(|at| at <= now) {
            self.next_page_at = None;
            self.start_page(now, out);
        }
        self.pool.handle_timeout(now, out);
    }

    fn trace(&self, values: &mut [f64]) {
        let s = self.pool.stats();
        let all = [
            self.pages_started as f64,
            self.pages_completed as f64,
            s.opened as f64,
            self.objects_completed as f64,
            self.pool.active_sends() as f64,
            s.delivered as f64,
            s.delivered as f64 * f64::from(self.config.tcp.data_packet_bytes()),
        ];
        for (slot, value) in values.iter_mut().zip(all) {
            *slot = value;
        }
    }
}
