//! The runtime's `tracing` output on the CPU backend: a subscriber that asks for the
//! `resident` target sees the start, the submit and wait spans, residency exits and
//! relaunches, and a fault as an error event (which, with no subscriber, would have gone
//! to stderr: host/util/report.rs).

use resident::{Runtime, RuntimeConfig, Task};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// What the subscriber saw: "LEVEL message" for events, "span NAME" for spans.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Capture {
    next: AtomicU64,
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Capture {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.target().starts_with("resident")
    }
    fn new_span(&self, a: &Attributes<'_>) -> Id {
        SEEN.lock().unwrap().push(format!("span {}", a.metadata().name()));
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed))
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, e: &Event<'_>) {
        let mut m = Message(String::new());
        e.record(&mut m);
        SEEN.lock().unwrap().push(format!("{} {}", e.metadata().level(), m.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn seen(what: &str) -> bool {
    SEEN.lock().unwrap().iter().any(|s| s.contains(what))
}

#[test]
fn host_path_reports_through_tracing() {
    tracing::subscriber::set_global_default(Capture { next: AtomicU64::new(1) }).unwrap();
    let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 2, ..RuntimeConfig::cpu() }).unwrap();
    assert!(seen("INFO runtime started"), "{:?}", SEEN.lock().unwrap());
    rt.submit(&[Task::noop(1); 10]).unwrap().wait().unwrap();
    assert!(seen("span submit") && seen("span wait"), "{:?}", SEEN.lock().unwrap());
    // Idle: the kernel (here the CPU workers) exits; the next submission relaunches it.
    let start = Instant::now();
    while !rt.sharing().release().unwrap() {
        assert!(start.elapsed() < Duration::from_secs(5), "release never found the runtime idle");
        std::thread::yield_now();
    }
    rt.submit(&[Task::noop(2)]).unwrap().wait().unwrap();
    assert!(seen("DEBUG resident kernel exited") && seen("DEBUG resident kernel relaunched"), "{:?}", SEEN.lock().unwrap());
    // A device fault (a task that panics on the CPU backend), reported once as an error.
    // SAFETY: fault injection kills this runtime only.
    let t = unsafe { rt.batch(&[Task::fault_trap()]).submit_unchecked() }.unwrap();
    assert!(t.wait().is_err());
    let errors = SEEN.lock().unwrap().iter().filter(|s| s.starts_with("ERROR") && s.contains("every outstanding ticket fails")).count();
    assert_eq!(errors, 1, "{:?}", SEEN.lock().unwrap());
}
