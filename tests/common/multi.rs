//! Several runtimes in one process, one per device, and links between them.
//! Each scenario takes `base(device)`: the configuration of the runtime on a device
//! (CPU runtimes stand in for devices in `multi_cpu.rs`; `multi_gpu.rs` uses real ones).

use resident::{Error, Link, Rejection, Runtime, RuntimeConfig, Status, Task};
use std::time::Duration;

/// Fresh random-ish marks pattern: `n` leaves split into `Forward` tasks of varied
/// sizes (1 to 64), offset by `first`.
fn forwards(link: resident::LinkId, marks: resident::Slice<u32>, first: u32, n: u32, salt: u32) -> Vec<Task> {
    let mut tasks = Vec::new();
    let mut at = 0u32;
    let mut x = salt.wrapping_mul(2654435761) | 1;
    while at < n {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let c = (x % 64 + 1).min(n - at);
        tasks.push(Task::forward(link, marks, first + at, c));
        at += c;
    }
    tasks
}

/// `n` runtimes on devices `0..n`, each driven from its own thread at once (trees grown
/// on the device, marks), and a thread that waits on tickets of all of them.
pub fn runtimes_per_device(base: fn(usize) -> RuntimeConfig, n: usize) {
    let rts: Vec<Runtime> = (0..n).map(|d| Runtime::with_config(base(d)).unwrap()).collect();
    for (d, rt) in rts.iter().enumerate() {
        assert_eq!(rt.backend().device, d);
    }
    let nodes = Task::tree_nodes(5, 4).unwrap();
    std::thread::scope(|s| {
        for rt in &rts {
            s.spawn(move || {
                let marks = rt.buffer::<u32>(nodes as usize + 4096).unwrap();
                for round in 0..5u32 {
                    let mut tasks = vec![Task::tree(marks.slice(0..nodes as usize), 0, 5, 4)];
                    tasks.extend((0..4096u32).map(|i| Task::mark(marks.slice(nodes as usize..), i)));
                    rt.submit(&tasks).unwrap().wait().unwrap();
                    let got = marks.read().unwrap();
                    assert!(got.iter().all(|&v| v == round + 1), "device {}: round {round} not exactly once", rt.backend().device);
                }
            });
        }
    });
    // Tickets of every runtime, waited together in reverse order.
    let bufs: Vec<_> = rts.iter().map(|rt| rt.buffer::<u32>(1024).unwrap()).collect();
    let tickets: Vec<_> =
        rts.iter().zip(&bufs).map(|(rt, b)| rt.submit(&(0..1024).map(|i| Task::mark(b.all(), i)).collect::<Vec<_>>()).unwrap()).collect();
    for t in tickets.iter().rev() {
        t.wait().unwrap();
    }
    for b in &bufs {
        assert!(b.read().unwrap().iter().all(|&v| v == 1));
    }
    for rt in rts {
        rt.close().unwrap();
    }
}

/// A handle of one device's runtime used on another's is a typed error, and nothing of
/// it runs: a slice, a counter, a task list, a link id.
pub fn foreign_handles(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let xa = a.buffer::<u32>(64).unwrap();
    let r = b.submit(&[Task::mark(xa.all(), 0)]);
    assert!(matches!(r, Err(Error::InvalidTask { index: 0, reason: Rejection::BadBuffer { .. } })), "{r:?}");
    let ca = a.counter().unwrap();
    let xb = b.buffer::<u32>(64).unwrap();
    let r = b.submit(&[Task::mark(xb.all(), 0).after(ca.id(), 1)]);
    assert!(matches!(r, Err(Error::InvalidTask { index: 0, reason: Rejection::BadCounter(_) })), "{r:?}");
    // A's link id in a task of B: B has no such link (generations are per process).
    let link = Link::new(&a, &b).unwrap();
    let r = b.submit(&[Task::forward(link.id(), xb.all(), 0, 1)]).unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadLink, .. })), "{r:?}");
    assert!(xa.read().unwrap().iter().all(|&v| v == 0) && xb.read().unwrap().iter().all(|&v| v == 0));
    drop(link);
    drop((ca, xa, xb));
    a.close().unwrap();
    b.close().unwrap();
}

/// Tasks of A push follow-up tasks into B through a link, and B's into A through
/// another, from several producer threads at once: every pushed task runs exactly once
/// on the other side; `flush` waits for them; the links keep working across idle exits
/// of either runtime.
pub fn links_exactly_once(base: fn(usize) -> RuntimeConfig, per_round: u32, rounds: u32, both_ways: bool) {
    links_exactly_once_by(base, per_round, rounds, both_ways, false)
}

/// [`links_exactly_once`] through peer links (`Link::peer`): the pushes go
/// straight into the other device's inbox, drained by its relay warp.
pub fn peer_links_exactly_once(base: fn(usize) -> RuntimeConfig, per_round: u32, rounds: u32, both_ways: bool) {
    links_exactly_once_by(base, per_round, rounds, both_ways, true)
}

fn links_exactly_once_by(base: fn(usize) -> RuntimeConfig, per_round: u32, rounds: u32, both_ways: bool, peer: bool) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let (ab, ba) = if peer {
        (Link::peer(&a, &b).unwrap(), Link::peer(&b, &a).unwrap())
    } else {
        (Link::new(&a, &b).unwrap(), Link::new(&b, &a).unwrap())
    };
    assert_eq!((ab.is_peer(), ba.is_peer()), (peer, peer));
    let producers = 2u32;
    let total = per_round * rounds * producers;
    let on_b = b.buffer::<u32>(total as usize).unwrap();
    let on_a = a.buffer::<u32>(total as usize).unwrap();
    let done = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|s| {
        // Progress, every 2 s while it runs: where a stall is.
        s.spawn(|| {
            let start = std::time::Instant::now();
            while done.load(std::sync::atomic::Ordering::Relaxed) < producers {
                std::thread::sleep(Duration::from_millis(50));
                if start.elapsed().as_millis() % 2000 < 50 {
                    eprintln!(
                        "links_exactly_once {:?}: rounds done {}, A->B {:?}, B->A {:?}, A {:?}, B {:?}",
                        start.elapsed(),
                        done.load(std::sync::atomic::Ordering::Relaxed),
                        ab.stats(),
                        ba.stats(),
                        a.metrics().residency,
                        b.metrics().residency
                    );
                }
            }
        });
        for p in 0..producers {
            let (a, b, ab, ba, on_a, on_b, done) = (&a, &b, &ab, &ba, &on_a, &on_b, &done);
            s.spawn(move || {
                // Counted even if this thread panics, so that the progress thread ends.
                struct Done<'a>(&'a std::sync::atomic::AtomicU32);
                impl Drop for Done<'_> {
                    fn drop(&mut self) {
                        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                let _done = Done(done);
                for r in 0..rounds {
                    let first = (p * rounds + r) * per_round;
                    let ta = a.submit(&forwards(ab.id(), on_b.all(), first, per_round, first + 1)).unwrap();
                    let tb =
                        if both_ways { Some(b.submit(&forwards(ba.id(), on_a.all(), first, per_round, first + 7)).unwrap()) } else { None };
                    ta.wait().unwrap();
                    if let Some(tb) = tb {
                        tb.wait().unwrap();
                    }
                    if r % 3 == 2 {
                        // Idle exits, if the runtimes are idle now (the pushed tasks
                        // may still be in flight: then nothing happens).
                        let _ = a.sharing().release();
                        let _ = b.sharing().release();
                    }
                }
            });
        }
    });
    let sa = ab.flush().unwrap();
    let sb = ba.flush().unwrap();
    assert_eq!((sa.forwarded, sa.completed, sa.failed), (total as u64, total as u64, 0), "{sa:?}");
    let back = if both_ways { total as u64 } else { 0 };
    assert_eq!((sb.forwarded, sb.completed, sb.failed), (back, back, 0), "{sb:?}");
    let (gb, ga) = (on_b.read().unwrap(), on_a.read().unwrap());
    for i in 0..total as usize {
        assert_eq!(gb[i], 1, "A->B leaf {i}");
        assert_eq!(ga[i], both_ways as u32, "B->A leaf {i}");
    }
    assert_eq!(ab.close().unwrap(), sa);
    assert_eq!(ba.close().unwrap(), sb);
    a.close().unwrap();
    b.close().unwrap();
}

/// What goes wrong through a link is reported, and nothing is lost or run twice:
/// a push the other runtime refuses (out of range there) fails alone and `flush` says
/// so; a push through a closed link fails on the device with `BadLink`; a small outbox
/// under a burst waits for room rather than losing tasks.
pub fn link_errors(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let marks = b.buffer::<u32>(256).unwrap();
    // An outbox of 2 slots: a burst of 1024 pushes from many warps waits for the
    // forwarder many times over.
    let link = Link::with_capacity(&a, &b, 2).unwrap();
    a.submit(&[Task::forward(link.id(), marks.all(), 0, 200)]).unwrap().wait().unwrap();
    // Leaves 250..260 of a 256-element buffer: the last 4 are refused by B's checks.
    a.submit(&[Task::forward(link.id(), marks.all(), 250, 10)]).unwrap().wait().unwrap();
    let r = link.flush();
    assert!(matches!(r, Err(Error::InvalidTask { reason: Rejection::IndexOutOfRange { .. }, .. })), "{r:?}");
    let s = link.stats();
    assert_eq!((s.forwarded, s.completed, s.failed), (210, 206, 4), "{s:?}");
    let got = marks.read().unwrap();
    assert!(got[..200].iter().all(|&v| v == 1) && got[200..250].iter().all(|&v| v == 0) && got[250..].iter().all(|&v| v == 1));
    // The flush reported the error once.
    assert_eq!(link.flush().unwrap(), s);
    let id = link.id();
    assert_eq!(link.close().unwrap(), s);
    let r = a.submit(&[Task::forward(id, marks.all(), 0, 1)]).unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadLink, .. })), "{r:?}");
    // Forged ids: an index past the table, a generation never handed out, none.
    for forged in [
        resident::LinkId { index: 9999, generation: id.generation },
        resident::LinkId { index: id.index, generation: u32::MAX },
        resident::LinkId::NONE,
    ] {
        let r = a.submit(&[Task::forward(forged, marks.all(), 0, 1)]).unwrap().wait();
        assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadLink, .. })), "{forged:?}: {r:?}");
    }
    // Bad arguments are refused at submission on A.
    assert!(matches!(a.submit(&[Task::forward(id, marks.all(), 0, 0)]), Err(Error::InvalidTask { .. })));
    assert!(matches!(Link::with_capacity(&a, &b, 3), Err(Error::Config(_))));
    // A dropped runtime B: what is pushed after fails, reported by flush, nothing hangs.
    let link = Link::new(&a, &b).unwrap();
    drop(marks);
    b.close().unwrap();
    let fresh = a.buffer::<u32>(4).unwrap();
    a.submit(&[Task::forward(link.id(), fresh.all(), 0, 4)]).unwrap().wait().unwrap();
    let r = link.flush_timeout(Duration::from_secs(20));
    assert!(matches!(r, Err(Error::ShutDown) | Err(Error::InvalidTask { .. })), "{r:?}");
    drop(link);
    a.close().unwrap();
}

/// What goes wrong through a peer link is reported, and nothing is lost or run twice:
/// a pushed task that B's device refuses (a slice out of range there) fails alone and
/// `flush` says so once; a push through a closed link fails with `BadLink`; a 2-slot
/// inbox under a burst waits for room; a dropped link gives B back (it may exit when
/// idle again); a closed B makes waiting pushes fail and `flush` report `ShutDown`.
pub fn peer_link_errors(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let marks = b.buffer::<u32>(256).unwrap();
    let link = Link::peer_with_capacity(&a, &b, 2).unwrap();
    assert!(link.is_peer());
    // B is held resident while the link is open.
    assert!(!b.sharing().release().unwrap());
    a.submit(&[Task::forward(link.id(), marks.all(), 0, 200)]).unwrap().wait().unwrap();
    a.submit(&[Task::forward(link.id(), marks.all(), 250, 10)]).unwrap().wait().unwrap();
    let r = link.flush();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::ChildFailed, .. })), "{r:?}");
    let s = link.stats();
    assert_eq!((s.forwarded, s.completed, s.failed), (210, 206, 4), "{s:?}");
    let got = marks.read().unwrap();
    assert!(got[..200].iter().all(|&v| v == 1) && got[200..250].iter().all(|&v| v == 0) && got[250..].iter().all(|&v| v == 1));
    assert_eq!(link.flush().unwrap(), s);
    let id = link.id();
    assert_eq!(link.close().unwrap(), s);
    let r = a.submit(&[Task::forward(id, marks.all(), 0, 1)]).unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadLink, .. })), "{r:?}");
    // Closed: B may exit when idle again.
    let start = std::time::Instant::now();
    while !b.sharing().release().unwrap() {
        assert!(start.elapsed() < Duration::from_secs(5), "B stays held after the close");
        std::thread::sleep(Duration::from_millis(1));
    }
    // Dropped without a close: the pushes before still run (the drop's thread flushes).
    let link = Link::peer(&a, &b).unwrap();
    let more = b.buffer::<u32>(64).unwrap();
    a.submit(&[Task::forward(link.id(), more.all(), 0, 64)]).unwrap().wait().unwrap();
    drop(link);
    let start = std::time::Instant::now();
    while more.read().unwrap().iter().any(|&v| v != 1) {
        assert!(start.elapsed() < Duration::from_secs(10), "a dropped link's pushes never ran");
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(more.read().unwrap().iter().all(|&v| v == 1));
    // B closed under an open link: its close cleared the link's entry in A, so pushes
    // fail with `BadLink` before they take a position; nothing is lost, nothing hangs.
    let link = Link::peer_with_capacity(&a, &b, 2).unwrap();
    drop((marks, more));
    b.close().unwrap();
    let fresh = a.buffer::<u32>(4).unwrap();
    let r = a.submit(&[Task::forward(link.id(), fresh.all(), 0, 64)]).unwrap().wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadLink, .. })), "{r:?}");
    let r = link.flush_timeout(Duration::from_secs(20));
    assert!(matches!(r, Ok(s) if s.forwarded == 0) || matches!(r, Err(Error::ShutDown)), "{r:?}");
    drop(link);
    a.close().unwrap();
}

/// Peer links need two CUDA devices: elsewhere a typed error (the CPU backend; two
/// runtimes with different task sets are refused the same way on GPUs).
pub fn peer_link_refused(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let r = Link::peer(&a, &b);
    assert!(matches!(r, Err(Error::NoPeerPath(_))), "{r:?}");
    assert!(matches!(Link::peer_with_capacity(&a, &b, 3), Err(Error::Config(_))));
    // The host path still joins them.
    let link = Link::new(&a, &b).unwrap();
    assert!(!link.is_peer());
}

/// A runtime makes at most `MAX_LINKS` links over its life; the next is a typed error.
pub fn link_limit(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let mut made = 0;
    loop {
        match Link::with_capacity(&a, &b, 2) {
            Ok(l) => {
                made += 1;
                drop::<Link>(l);
            }
            Err(Error::TooManyLinks(n)) => {
                assert_eq!(made, n);
                break;
            }
            Err(e) => panic!("{e}"),
        }
    }
    a.close().unwrap();
    b.close().unwrap();
}

/// Closing one device's runtime while another device's stays resident (`Always`)
/// returns: the first one's pinned frees would wait for the second's kernel, so they
/// are deferred until no resident kernel runs (host/driver/resident_kernels.rs). And a
/// pinned buffer of the stream API dropped beside a resident runtime on its own device
/// returns at once too. The second runtime works after both; its own close frees
/// everything deferred.
pub fn close_beside_resident(base: fn(usize) -> RuntimeConfig) {
    let always = |d| RuntimeConfig { residency: resident::Residency::Always, ..base(d) };
    let a = Runtime::with_config(always(0)).unwrap();
    let b = Runtime::with_config(always(1)).unwrap();
    let xa = a.buffer::<u32>(256).unwrap();
    let xb = b.buffer::<u32>(256).unwrap();
    a.submit(&(0..256).map(|i| Task::mark(xa.all(), i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
    b.submit(&(0..256).map(|i| Task::mark(xb.all(), i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
    assert!(b.metrics().residency.resident);
    let gpu = a.device().unwrap();
    let pinned = gpu.pinned::<u32>(1 << 20).unwrap();
    drop(pinned);
    drop(gpu);
    assert!(xa.read().unwrap().iter().all(|&v| v == 1));
    drop(xa);
    a.close().unwrap();
    b.submit(&(0..256).map(|i| Task::mark(xb.all(), i)).collect::<Vec<_>>()).unwrap().wait().unwrap();
    assert!(xb.read().unwrap().iter().all(|&v| v == 2));
    drop(xb);
    b.close().unwrap();
}

/// Buffers across runtimes (devices): a copy from another runtime's buffer lands whole
/// (a peer copy between two CUDA devices), in both directions and within one runtime;
/// a length mismatch is a typed error and copies nothing.
pub fn peer_copies(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let n = (1 << 20) + 37;
    let mut x = 0x9e3779b9u32;
    let data: Vec<f32> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x as f32 / u32::MAX as f32) * 2.0 - 1.0
        })
        .collect();
    let on_a = a.buffer_from(&data).unwrap();
    let on_b = b.buffer_from(&vec![f32::NAN; n]).unwrap();
    on_b.copy_from(&on_a).unwrap();
    assert!(on_b.read().unwrap() == data, "A -> B");
    // Tasks on B change it; back to A; and within A.
    b.submit(&[Task::axpy(2.0, on_b.all(), on_b.all())]).unwrap().wait().unwrap();
    on_a.copy_from(&on_b).unwrap();
    let tripled: Vec<f32> = data.iter().map(|v| 3.0 * v).collect();
    assert!(on_a.read().unwrap() == tripled, "B -> A after a task on B");
    let other = a.buffer_from(&vec![0.0f32; n]).unwrap();
    other.copy_from(&on_a).unwrap();
    assert!(other.read().unwrap() == tripled, "within A");
    let short = b.buffer_from(&[7.0f32; 10]).unwrap();
    assert!(matches!(short.copy_from(&on_a), Err(Error::LengthMismatch { .. })));
    assert!(short.read().unwrap().iter().all(|&v| v == 7.0));
    drop((on_a, on_b, other, short));
    a.close().unwrap();
    b.close().unwrap();
}

/// NCCL between two runtimes' buffers (one process, one rank per device): sums and
/// maxima of fresh random values against the host's f64 reference; another runtime's
/// buffer is a typed error. Without CUDA (the CPU backend) the communicator is refused
/// with a typed error.
pub fn nccl_all_reduce(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let comms = resident::nccl::Communicator::for_runtimes(&[&a, &b]);
    if a.backend().kind != resident::BackendKind::Cuda {
        assert!(matches!(comms, Err(Error::Config(_))), "{comms:?}");
        return;
    }
    let mut comms = comms.unwrap();
    let n = 3 << 20;
    let mut seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() | 1;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let xs: Vec<Vec<f32>> = (0..2).map(|_| (0..n).map(|_| (rnd() % 2001) as f32 / 1000.0 - 1.0).collect()).collect();
    let us: Vec<Vec<u32>> = (0..2).map(|_| (0..n).map(|_| rnd()).collect()).collect();
    let fa = a.buffer_from(&xs[0]).unwrap();
    let fb = b.buffer_from(&xs[1]).unwrap();
    let ua = a.buffer_from(&us[0]).unwrap();
    let ub = b.buffer_from(&us[1]).unwrap();
    let (ca, cb) = comms.split_at_mut(1);
    std::thread::scope(|s| {
        let (ca, cb) = (&mut ca[0], &mut cb[0]);
        let (fa, fb, ua, ub) = (&fa, &fb, &ua, &ub);
        let t = s.spawn(move || {
            ca.all_reduce(fa, resident::nccl::ReduceOp::Sum).unwrap();
            ca.all_reduce(ua, resident::nccl::ReduceOp::Max).unwrap();
        });
        cb.all_reduce(fb, resident::nccl::ReduceOp::Sum).unwrap();
        cb.all_reduce(ub, resident::nccl::ReduceOp::Max).unwrap();
        t.join().unwrap();
    });
    for got in [fa.read().unwrap(), fb.read().unwrap()] {
        for i in 0..n {
            let want = xs[0][i] as f64 + xs[1][i] as f64;
            assert!((got[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0), "sum {i}: {} vs {want}", got[i]);
        }
    }
    for got in [ua.read().unwrap(), ub.read().unwrap()] {
        assert!((0..n).all(|i| got[i] == us[0][i].max(us[1][i])), "max");
    }
    // The runtimes still run tasks (relaunched after NCCL's calls).
    a.submit(&[Task::axpy(1.0, fa.all(), fa.all())]).unwrap().wait().unwrap();
    assert!(matches!(comms[0].all_reduce(&fb, resident::nccl::ReduceOp::Sum), Err(Error::ForeignHandle(_))));
    drop(comms);
    drop((fa, fb, ua, ub));
    a.close().unwrap();
    b.close().unwrap();
}

/// Events and streams across devices (the stream API of each runtime's device): a
/// stream of device B waits for an event recorded on device A's stream, and for A's
/// stream itself, so B's host callback runs after A's kernel (a 20 ms spin, then a
/// callback that sets a flag) on the other device. A CUDA stream and a CPU device's
/// event cannot order each other: a typed error.
pub fn events_across_devices(base: fn(usize) -> RuntimeConfig) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let (ga, gb) = (a.device().unwrap(), b.device().unwrap());
    let (sa, sb) = (ga.stream().unwrap(), gb.stream().unwrap());
    let flag = ga.alloc_zeroed::<u32>(1).unwrap();
    for via_stream in [false, true] {
        let done = Arc::new(AtomicU32::new(0));
        let seen = Arc::new(AtomicU32::new(u32::MAX));
        let start = std::time::Instant::now();
        sa.spin_write(flag.view(), 7, Duration::from_millis(20)).unwrap();
        let d = done.clone();
        sa.on_host(move || d.store(1, Ordering::SeqCst)).unwrap();
        if via_stream {
            sb.wait_stream(&sa).unwrap();
        } else {
            let e = ga.event().unwrap();
            sa.record(&e).unwrap();
            sb.wait_event(&e).unwrap();
        }
        let (d, s) = (done.clone(), seen.clone());
        sb.on_host(move || s.store(d.load(Ordering::SeqCst), Ordering::SeqCst)).unwrap();
        sb.synchronize().unwrap();
        assert_eq!(seen.load(Ordering::SeqCst), 1, "B's callback ran before A's work (via_stream {via_stream})");
        assert!(start.elapsed() >= Duration::from_millis(20));
        sa.synchronize().unwrap();
    }
    assert_eq!(flag.to_vec().unwrap(), vec![7]);
    // One of each kind cannot order the other.
    let cpu = resident::stream::Device::cpu();
    let other_kind = if ga.is_cpu() { None } else { Some(cpu.stream().unwrap()) };
    if let Some(s) = other_kind {
        let e = ga.event().unwrap();
        sa.record(&e).unwrap();
        assert!(matches!(s.wait_event(&e), Err(Error::ForeignHandle(_))));
        assert!(matches!(s.wait_stream(&sa), Err(Error::ForeignHandle(_))));
    }
    drop((sa, sb, flag, ga, gb));
    a.close().unwrap();
    b.close().unwrap();
}

/// `Link::flush` is not held back by pushes that keep coming after it began (a thread
/// submits pushers to A all the while), and a link whose pushing runtime closes
/// finishes by itself: its flush returns, and dropping it does not wait.
pub fn link_flush_and_owner_close(base: fn(usize) -> RuntimeConfig) {
    let a = Runtime::with_config(base(0)).unwrap();
    let b = Runtime::with_config(base(1)).unwrap();
    let marks = b.buffer::<u32>(1 << 16).unwrap();
    let link = Link::new(&a, &b).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let pushed = std::thread::scope(|s| {
        let feeder = s.spawn(|| {
            let mut n = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && n + 64 <= 1 << 16 {
                a.submit(&[Task::forward(link.id(), marks.all(), n, 64)]).unwrap().wait().unwrap();
                n += 64;
            }
            n
        });
        // Several flushes while the feeder pushes: each returns.
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(2));
            link.flush_timeout(Duration::from_secs(20)).unwrap();
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        feeder.join().unwrap()
    });
    let s = link.flush().unwrap();
    assert_eq!((s.forwarded, s.completed, s.failed), (pushed as u64, pushed as u64, 0), "{s:?}");
    let got = marks.read().unwrap();
    assert!(got[..pushed as usize].iter().all(|&v| v == 1) && got[pushed as usize..].iter().all(|&v| v == 0));
    // The pushing runtime closes while the link lives: the forwarder ends by itself.
    a.close().unwrap();
    let start = std::time::Instant::now();
    let after = link.flush_timeout(Duration::from_secs(20)).unwrap();
    assert_eq!(after.forwarded, pushed as u64);
    drop(link);
    assert!(start.elapsed() < Duration::from_secs(15), "{:?}", start.elapsed());
    drop(marks);
    b.close().unwrap();
}
