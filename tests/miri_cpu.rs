//! The CPU backend under Miri (CI: `cargo +nightly miri test --test miri_cpu`): the
//! whole host path (producer, publisher, completion tracker, tickets, the lifecycle)
//! and the persistent loop on worker threads, with tasks that race on one buffer and
//! host copies that race with tasks. Miri's data-race detector fails the test on any
//! access that no happens-before edge orders and that is not atomic (the queue
//! protocol's handshakes, the buffer accesses of `arch::racy`), and on mixed-size
//! atomic races. Small on purpose: Miri runs it about a million times slower. Also an
//! ordinary test in the suite.

use resident::{Link, Runtime, RuntimeConfig, Task};

fn runtime() -> Runtime {
    Runtime::with_config(RuntimeConfig { capacity: 64, cpu_workers: 2, ..RuntimeConfig::cpu() }).unwrap()
}

/// Two axpys on one `y` at once (a race on its elements: torn values at worst, here
/// exact since both add the same), a host write racing a third task, then exact
/// results after the waits.
#[test]
fn racing_tasks_and_copies() {
    let rt = runtime();
    let x = rt.buffer_from(&[1.0f32; 8]).unwrap();
    let y = rt.buffer_from(&[0.0f32; 8]).unwrap();
    let t = rt.submit(&[Task::axpy(1.0, x.all(), y.all()), Task::axpy(2.0, x.all(), y.all())]).unwrap();
    t.wait().unwrap();
    let got = y.read().unwrap();
    // Racing read-modify-writes may lose one add per element; every value is one of
    // the possible outcomes.
    assert!(got.iter().all(|&v| v == 1.0 || v == 2.0 || v == 3.0), "{got:?}");
    std::thread::scope(|s| {
        s.spawn(|| rt.submit(&[Task::axpy(1.0, x.all(), y.all())]).unwrap().wait().unwrap());
        s.spawn(|| x.write(&[2.0; 8]).unwrap());
    });
    y.write(&[0.0; 8]).unwrap();
    rt.submit(&[Task::axpy(0.5, x.all(), y.all())]).unwrap().wait().unwrap();
    assert_eq!(y.read().unwrap(), vec![1.0; 8]);
    rt.close().unwrap();
}

/// Tickets from two producers, a future and a blocking wait on one ticket, a counter
/// joining two tasks, and a close from two threads.
#[test]
fn producers_tickets_and_close() {
    let rt = runtime();
    let c = rt.counter().unwrap();
    let marks = rt.buffer::<u32>(4).unwrap();
    std::thread::scope(|s| {
        for k in 0..2u32 {
            let (rt, marks, c) = (&rt, &marks, &c);
            s.spawn(move || rt.submit(&[Task::mark(marks.all(), k).signals(c.id())]).unwrap().wait().unwrap());
        }
    });
    let t = rt.submit(&[Task::mark(marks.all(), 2).after(c.id(), 2)]).unwrap();
    std::thread::scope(|s| {
        s.spawn(|| futures::executor::block_on(t.wait_async()).unwrap());
        s.spawn(|| t.wait().unwrap());
    });
    assert_eq!(marks.read().unwrap(), vec![1, 1, 1, 0]);
    assert_eq!(c.value().unwrap(), 2);
    std::thread::scope(|s| {
        s.spawn(|| rt.close().unwrap());
        s.spawn(|| rt.close().unwrap());
    });
}

/// Elastic residency: the workers leave an idle queue (`release`), the header
/// is reset by plain stores after they are joined, and the next submission starts new
/// workers, twice over; a producer thread races the exits. Every task exactly once.
#[test]
fn exits_and_relaunches() {
    let rt = runtime();
    let marks = rt.buffer::<u32>(12).unwrap();
    for round in 0..2u32 {
        rt.submit(&[Task::mark(marks.all(), round)]).unwrap().wait().unwrap();
        while !rt.sharing().release().unwrap() {
            std::thread::yield_now();
        }
    }
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 2..12 {
                rt.submit(&[Task::mark(marks.all(), i)]).unwrap().wait().unwrap();
            }
        });
        s.spawn(|| {
            for _ in 0..4 {
                let _ = rt.sharing().release().unwrap();
                std::thread::yield_now();
            }
        });
    });
    assert_eq!(marks.read().unwrap(), vec![1; 12]);
    assert!(rt.metrics().residency.relaunches >= 2);
    rt.close().unwrap();
}

/// Links: tasks of one runtime push follow-up tasks into another's through
/// an outbox of 2 slots (so pushers wait for the forwarder, and slots are reused), the
/// forwarder pops them (F1, F2 against L3, L4: a data race there is what Miri would
/// report) and submits them to the other runtime. Every leaf marked once.
#[test]
fn link_pushes_across_runtimes() {
    let a = runtime();
    let b = runtime();
    let marks = b.buffer::<u32>(6).unwrap();
    let link = Link::with_capacity(&a, &b, 2).unwrap();
    a.submit(&[Task::forward(link.id(), marks.all(), 0, 3), Task::forward(link.id(), marks.all(), 3, 3)]).unwrap().wait().unwrap();
    let s = link.flush().unwrap();
    assert_eq!((s.forwarded, s.completed, s.failed), (6, 6, 0));
    assert_eq!(marks.read().unwrap(), vec![1; 6]);
    link.close().unwrap();
    drop(marks);
    a.close().unwrap();
    b.close().unwrap();
}
