//! A tracing subscriber that records every span and event with all its fields as text
//! lines, set for the test's own thread only.
//!
//! The other tests of the binary run meanwhile on other threads: their spans must not land
//! in the capture (nor the capture in theirs), so the subscriber is this thread's default
//! (`tracing::subscriber::set_default`), not the process-wide one. A test using it runs on a
//! current-thread runtime, so every task of it, and every span and event chnative makes for
//! it, is on that thread.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// The recorded lines: `span NAME fields…`, `record ID fields…`, `event LEVEL TARGET fields…`.
#[derive(Clone, Default)]
pub struct Capture {
    lines: Arc<Mutex<Vec<String>>>,
    next: Arc<AtomicU64>,
}

/// Keeps the capture set on this thread until dropped.
pub struct Capturing {
    _default: tracing::subscriber::DefaultGuard,
    _second: tracing::Dispatch,
}

impl Capture {
    /// A capture set as this thread's subscriber until the returned guard is dropped.
    pub fn on_this_thread() -> (Capture, Capturing) {
        let capture = Capture::default();
        let default = tracing::subscriber::set_default(capture.clone());
        // tracing-core caches per callsite whether any subscriber wants it. While only one
        // dispatcher is registered in the process, it asks just the default of the thread that
        // first reaches a callsite: a span first made by another test's thread (no subscriber
        // there) would be cached as "never", and this test would miss its own. With a second,
        // inert dispatcher alive it asks every live one, and the capture says yes.
        let second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
        (capture, Capturing { _default: default, _second: second })
    }

    /// Every line so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// The WARN events so far.
    pub fn warnings(&self) -> Vec<String> {
        self.lines.lock().unwrap().iter().filter(|l| l.starts_with("event WARN")).cloned().collect()
    }

    fn push(&self, line: String) {
        self.lines.lock().unwrap().push(line);
    }
}

struct Fields(String);
impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={:?}", field.name(), value);
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut f = Fields(format!("span {}", span.metadata().name()));
        span.record(&mut f);
        self.push(f.0);
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut f = Fields(format!("record {}", span.into_u64()));
        values.record(&mut f);
        self.push(f.0);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut f = Fields(format!("event {} {}", event.metadata().level(), event.metadata().target()));
        event.record(&mut f);
        self.push(f.0);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
