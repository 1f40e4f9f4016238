//! Tasks whose declarations lie, tried as a careless or hostile user would, as scenarios
//! run on both backends: `lies_cpu.rs` (CI) and `lies_gpu.rs` (on a GPU,
//! `--include-ignored`). Every buffer is filled with fresh random values first; after
//! each task, every element outside what its declaration grants must be unchanged.
#![allow(dead_code)]

use lying_tasks::{MARK, allowed};
use lying_tasks_device::{Impostor, Lie, Verbose, mode, op};
use proptest::prelude::*;
use rand::Rng;
use resident::{Buffer, DeviceTask, Error, Rejection, Runtime, Slice, Status, Task};
use std::time::Duration;

/// `n` random values in a new buffer, with their copy.
fn random(rt: &Runtime, n: usize) -> (Vec<u32>, Buffer<u32>) {
    let mut rng = rand::rng();
    let v: Vec<u32> = (0..n).map(|_| rng.random::<u32>() | 1).collect();
    let b = rt.buffer_from(&v).unwrap();
    (v, b)
}

fn undeclared(r: Result<(), Error>) -> bool {
    matches!(r, Err(Error::TaskFailed { status: Status::Undeclared, .. }))
}

/// A task that names a dropped buffer without declaring it, submitted after the drop
/// while earlier work is still in flight, never reaches that buffer's memory, whichever
/// buffer holds it now: the device refuses the undeclared slice; and once the tasks
/// submitted before the drop complete, the buffer's table entry is cleared before its
/// memory goes, so not even a task let past the host (`Batch::submit_unchecked`) that declares
/// the stale slice reaches it.
pub fn dropped_buffer_never_reached(rt: &Runtime) {
    const N: usize = 1 << 16;
    let (_, declared) = random(rt, 64);
    for round in 0..4 {
        let (_, a) = random(rt, N);
        let stale = a.all();
        // Work in flight across the drop, one task of it naming `a` as declared.
        let busy = rt.submit(&[Task::spin(20_000_000)]).unwrap();
        let before = rt.submit(&[Lie::new(stale, mode::WRITE, stale, op::WRITE).task()]).unwrap();
        drop(a);
        let (b_data, b) = random(rt, N);
        // Declared: refused by the host (the handle is dropped).
        let r = rt.submit(&[Lie::new(stale, mode::WRITE, stale, op::WRITE).task()]);
        assert!(matches!(r, Err(Error::InvalidTask { reason: Rejection::BadBuffer { .. }, .. })), "round {round}: {r:?}");
        // Undeclared: past the host, refused by the device.
        for o in [op::WRITE, op::RAW_WRITE, op::ATOMIC, op::READ] {
            let t = rt.submit(&[Lie::new(declared.all(), mode::WRITE, stale, o).task()]).unwrap();
            assert!(undeclared(t.wait()), "round {round}: op {o} on a dropped buffer's undeclared slice");
        }
        assert_eq!(before.wait(), Ok(()), "a task submitted before the drop runs on the buffer");
        busy.wait().unwrap();
        rt.wait_idle().unwrap();
        // Everything before the drop has completed: the next look clears the entry.
        let (_, c) = random(rt, 16);
        // SAFETY: the point of the test: a task that declares the stale slice, past the
        // host's check, must find no buffer behind it (nothing can be freed under it:
        // the device refuses it before any access).
        let t = unsafe { rt.batch(&[Lie::new(stale, mode::WRITE, stale, op::WRITE).task()]).submit_unchecked() }.unwrap();
        let r = t.wait();
        assert!(matches!(r, Err(Error::TaskFailed { status: Status::BadBuffer, .. })), "round {round}: {r:?}");
        assert_eq!(b.read().unwrap(), b_data, "round {round}: the buffer allocated after the drop was written");
        drop(c);
    }
}

/// A task is held to the mode and the extent it declared: read-only slices are not
/// written (element by element, in bulk, or atomically), slices are not reached past
/// the declared range, and a refused task touches nothing.
pub fn declarations_hold(rt: &Runtime) {
    let (x_data, x) = random(rt, 24);
    let sixteen = x.slice(0..16);
    let cases: Vec<(Lie, &str)> = vec![
        (Lie::new(x.all(), mode::READ, x.all(), op::WRITE), "writes a slice declared read"),
        (Lie::new(x.all(), mode::READ, x.all(), op::RAW_WRITE), "writes through a pointer a slice declared read"),
        (Lie::new(x.all(), mode::READ, x.all(), op::ATOMIC), "atomically updates a slice declared read"),
        (Lie::new(x.all(), mode::ATOMIC, x.all(), op::WRITE), "writes a slice declared atomic"),
        (Lie::new(x.all(), mode::ATOMIC, x.all(), op::RAW_WRITE), "writes through a pointer a slice declared atomic"),
        (Lie::new(sixteen, mode::WRITE, x.all(), op::WRITE), "writes 24 elements of 16 declared"),
        (Lie::new(sixteen, mode::WRITE, x.slice(8..24), op::WRITE), "writes a range that overlaps the declared one"),
        (Lie::new(sixteen, mode::NONE, sixteen, op::READ), "reads a slice it does not declare"),
    ];
    for (lie, what) in cases {
        assert!(!allowed(&lie), "{what}: the model says allowed");
        let t = rt.submit(&[lie.task()]).unwrap();
        assert!(undeclared(t.wait()), "{what}: not refused");
        assert_eq!(x.read().unwrap(), x_data, "{what}: memory changed");
    }
    // What is declared is allowed.
    let t = rt.submit(&[Lie::new(sixteen, mode::WRITE, x.slice(4..12), op::WRITE).task()]).unwrap();
    assert_eq!(t.wait(), Ok(()));
    let got = x.read().unwrap();
    for (i, (g, d)) in got.iter().zip(&x_data).enumerate() {
        assert_eq!(*g, if (4..12).contains(&i) { MARK } else { *d }, "element {i}");
    }
    // Two tasks of one batch that each declare their own half cannot reach the other's.
    let (y_data, y) = random(rt, 64);
    let (lo, hi) = (y.slice(0..32), y.slice(32..64));
    let t = rt.submit(&[Lie::new(lo, mode::WRITE, hi, op::WRITE).task(), Lie::new(hi, mode::WRITE, lo, op::WRITE).task()]).unwrap();
    assert!(undeclared(t.wait()));
    assert_eq!(y.read().unwrap(), y_data);
}

/// A counter a task does not declare is neither read nor signalled.
pub fn undeclared_counter_refused(rt: &Runtime) {
    let (_, x) = random(rt, 4);
    let c = rt.counter().unwrap();
    let mut lie = Lie::new(x.all(), mode::READ, x.all(), op::SIGNAL);
    lie.counter = c.id();
    let t = rt.submit(&[lie.task()]).unwrap();
    assert!(undeclared(t.wait()));
    assert_eq!(c.value().unwrap(), 0, "an undeclared counter was signalled");
    lie.modes |= mode::COUNTER;
    rt.submit(&[lie.task()]).unwrap().wait().unwrap();
    assert_eq!(c.value().unwrap(), 1, "a declared counter was not signalled");
}

/// A task that pushes children its declaration does not name pushes none, alone (the
/// express path, whose ticket resolves from the task's own record) or in a batch: its
/// ticket fails with `Undeclared`, and nothing runs after the ticket and `wait_idle`
/// return. A child that would touch more than its parent declared is refused too; a
/// declared child runs before its parent's ticket resolves.
pub fn undeclared_children_refused(rt: &Runtime) {
    let (x_data, x) = random(rt, 200 * 32);
    let part = |i: usize| x.slice(i * 32..(i + 1) * 32);
    // Alone, each: 200 express submissions.
    let tickets: Vec<_> = (0..200).map(|i| rt.submit(&[Lie::new(part(i), mode::WRITE, part(i), op::SPAWN).task()]).unwrap()).collect();
    for t in tickets {
        assert!(undeclared(t.wait()), "a lone task pushed an undeclared child");
    }
    // In one batch.
    let batch: Vec<Task> = (0..200).map(|i| Lie::new(part(i), mode::WRITE, part(i), op::SPAWN).task()).collect();
    assert!(undeclared(rt.submit(&batch).unwrap().wait()));
    rt.wait_idle().unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(x.read().unwrap(), x_data, "an undeclared child ran");
    // Declared type, but the child writes what its parent only reads.
    let t = rt.submit(&[Lie::new(part(0), mode::READ | mode::SPAWNS, part(0), op::SPAWN).task()]).unwrap();
    assert!(undeclared(t.wait()));
    // Declared type, but the child's slice lies outside the parent's.
    let t = rt.submit(&[Lie::new(part(0), mode::WRITE | mode::SPAWNS, part(1), op::SPAWN).task()]).unwrap();
    assert!(undeclared(t.wait()));
    // A child of a type outside the set that shares `Lie`'s id (its declaration within
    // the parent's): not run as a `Lie`, its bytes never read as one.
    let t = rt.submit(&[Lie::new(part(0), mode::WRITE | mode::SPAWNS, part(0), op::SPAWN_IMPOSTOR).task()]).unwrap();
    let r = t.wait();
    assert!(matches!(r, Err(Error::TaskFailed { status: Status::ChildFailed, .. })), "{r:?}");
    rt.wait_idle().unwrap();
    assert_eq!(x.read().unwrap(), x_data, "a child beyond its parent's declaration ran");
    // Declared: the ticket waits for the children.
    let tickets: Vec<_> =
        (0..200).map(|i| rt.submit(&[Lie::new(part(i), mode::WRITE | mode::SPAWNS, part(i), op::SPAWN).task()]).unwrap()).collect();
    for t in tickets {
        t.wait().unwrap();
    }
    assert!(x.read().unwrap().iter().all(|&v| v == MARK), "a declared child did not run before its parent's ticket resolved");
}

/// A task of a type that is not in the runtime's set is refused at submission whatever
/// its id, through every checked path; its memory is untouched. A record built by hand
/// (`Task::raw`, no type) is taken as the set's type of its id.
pub fn foreign_type_refused(rt: &Runtime) {
    let (x_data, x) = random(rt, 32);
    let impostor = Impostor { x: x.all() }.task();
    assert_eq!(impostor.id(), Lie::ID);
    let foreign = |r: Result<(), Error>| matches!(r, Err(Error::InvalidTask { reason: Rejection::ForeignType(id), .. }) if id == Lie::ID);
    assert!(foreign(rt.submit(&[impostor]).map(drop)), "submit");
    assert!(foreign(rt.batch(&[impostor]).try_submit().map(drop)), "try_submit");
    assert!(foreign(rt.batch(&vec![impostor; 5000]).pipelined().submit().map(drop)), "submit_pipelined");
    assert!(foreign(rt.submit(&vec![impostor; 5000]).map(drop)), "a large batch");
    assert!(foreign(rt.upload_tasks(&[Task::noop(1), impostor]).map(drop)), "upload_tasks");
    let mut r = rt.reserve(2).unwrap();
    r.push(Task::noop(2)).unwrap();
    assert!(foreign(r.push(impostor)), "Reservation::push");
    drop(r);
    rt.wait_idle().unwrap();
    assert_eq!(x.read().unwrap(), x_data, "an impostor ran");
    // The same bytes with no type: a `Lie` (here one that declares nothing and reads
    // what its bytes make of `act`: refused on the device, touching nothing).
    let raw = Task::raw(impostor.opcode, impostor.args);
    let r = rt.submit(&[raw]).unwrap().wait();
    assert!(r.is_ok() || undeclared(r.clone()), "{r:?}");
    assert_eq!(x.read().unwrap(), x_data);
}

/// The buffers and counters of the property test.
pub struct Arena {
    pub bufs: Vec<Buffer<u32>>,
}

impl Arena {
    pub fn new(rt: &Runtime) -> Self {
        Self { bufs: (0..3).map(|_| random(rt, 256).1).collect() }
    }
}

/// A slice of buffer `b` of the arena, `start..start + len` clamped into it.
fn slice_of(a: &Arena, b: usize, start: u32, len: u32) -> Slice<u32> {
    let buf = &a.bufs[b % a.bufs.len()];
    let start = start % (buf.len() as u32 + 1);
    let len = len % (buf.len() as u32 - start + 1);
    buf.slice(start as usize..(start + len) as usize)
}

/// A slice near `of`: itself, inside it, overlapping it, past it, or in another buffer.
fn near(a: &Arena, of: Slice<u32>, b: usize, kind: u8, x: u32, y: u32) -> Slice<u32> {
    let buf_index = a.bufs.iter().position(|buf| buf.handle() == of.handle).unwrap_or(0);
    match kind % 5 {
        0 => of,
        1 => of.sub(x % (of.len + 1), 0).map(|s| s.with_len(y % (of.len - (x % (of.len + 1)) + 1))).unwrap_or(of),
        2 => slice_of(a, buf_index, of.offset.saturating_add(x % 8), of.len),
        3 => slice_of(a, buf_index, of.offset.saturating_sub(x % 8), of.len + y % 8),
        _ => slice_of(a, b + 1, x, y),
    }
}

/// The property: a `Lie` of random declaration (two slices of the arena in random
/// modes, perhaps its own type as a child) and random action (read, write, atomic
/// update, write through a pointer, or a pushed child that writes) on a slice near a
/// declared one (itself, inside it, shifted, widened, or elsewhere), submitted through
/// the checked path, either runs (if its declaration grants what it does) or fails with
/// `Undeclared`; and no element outside the slices it declares for writing (or atomic
/// updates) ever changes.
pub fn lies_touch_only_declared_memory(rt: &Runtime, arena: &Arena, cases: u32) {
    let config = ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() };
    let strategy = (
        (any::<usize>(), any::<u32>(), any::<u32>(), any::<usize>(), any::<u32>(), any::<u32>()),
        (0u32..32, any::<u8>(), any::<usize>(), any::<u32>(), any::<u32>(), 0u32..5),
    );
    proptest!(config, |((d0, s0, l0, d1, s1, l1) in strategy.0, (modes, kind, b, x, y, o) in strategy.1)| {
        let decl = [slice_of(arena, d0, s0, l0), slice_of(arena, d1, s1, l1)];
        let act = near(arena, decl[(kind as usize / 5) % 2], b, kind, x, y);
        let lie = Lie { decl, modes, act, op: o, counter: resident::CounterId::NONE };
        let before: Vec<Vec<u32>> = arena.bufs.iter().map(|b| b.read().unwrap()).collect();
        let got = rt.submit(&[lie.task()]).unwrap().wait();
        if allowed(&lie) {
            prop_assert_eq!(&got, &Ok(()), "{:?}", lie);
        } else {
            prop_assert!(undeclared(got.clone()), "{:?}: {:?}", lie, got);
        }
        // Every changed element lies in a slice declared for writing or atomics.
        let writable = |h, i: u32| {
            (0..2).any(|k| {
                let m = lying_tasks::declared_mode(&lie, k);
                (m == mode::WRITE || m == mode::ATOMIC) && lie.decl[k].handle == h && (lie.decl[k].offset..lie.decl[k].offset + lie.decl[k].len).contains(&i)
            })
        };
        for (buf, old) in arena.bufs.iter().zip(&before) {
            let new = buf.read().unwrap();
            for (i, (n, o)) in new.iter().zip(old).enumerate() {
                prop_assert!(n == o || writable(buf.handle(), i as u32), "{:?} changed element {} of {:?}", lie, i, buf.handle());
            }
        }
    });
}

/// A user task whose `run` panics, submitted through the checked API (its declaration
/// is honest), while other tickets wait on `spin` and on a counter: the runtime's device
/// fault, named to every one of them (never `TaskFailed { Aborted }`, though the
/// fault's abort is what ended them), carrying the panic's message, and the answer of
/// every later call, the close's included. `rt`: four workers at
/// least.
pub fn a_task_that_panics_is_a_device_fault(rt: Runtime) {
    let b = rt.buffer_from(&[0u32; 4]).unwrap();
    let c = rt.counter().unwrap();
    let held = [rt.submit(&[Task::spin(60_000_000_000)]).unwrap(), rt.submit(&[Task::noop(1).after(c.id(), 1)]).unwrap()];
    std::thread::sleep(Duration::from_millis(200));
    let victim = rt.submit(&[Lie::new(b.all(), mode::READ, b.all(), op::PANIC).task()]).unwrap();
    let start = std::time::Instant::now();
    for t in &held {
        // `try_wait` only: no health poll records the fault before the ticket does.
        let r = loop {
            if let Some(r) = t.try_wait() {
                break r;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "a waiting ticket did not resolve");
            std::thread::sleep(Duration::from_millis(1));
        };
        assert!(matches!(&r, Err(Error::DeviceFault(m)) if m.contains("panics in run")), "{r:?}");
    }
    assert!(matches!(victim.wait_timeout(Duration::from_secs(10)), Err(Error::DeviceFault(_))));
    assert!(matches!(rt.submit(&[Task::noop(0)]), Err(Error::DeviceFault(_))));
    assert!(matches!(rt.counter(), Err(Error::DeviceFault(_))));
    assert!(matches!(rt.close(), Err(Error::DeviceFault(_))));
    assert!(matches!(rt.submit(&[Task::noop(0)]), Err(Error::DeviceFault(_))), "after the close: the fault, not ShutDown");
}

/// A declaration of more items than the device holds a running task to is refused at
/// submission (`DeclarationTooLong`); one of as many runs.
pub fn long_declarations_refused(rt: &Runtime) {
    let (x_data, x) = random(rt, 100);
    let sum = x_data.iter().fold(0u32, |a, &v| a.wrapping_add(v)) as u64;
    let max = resident::COLLECTED as u32;
    let t = rt.batch(&[Verbose { x: x.all(), n: max }.task()]).results().submit().unwrap();
    assert_eq!(t.results().unwrap(), vec![sum]);
    for n in [max + 1, 40] {
        let r = rt.submit(&[Verbose { x: x.all(), n }.task()]).map(drop);
        assert!(
            matches!(r, Err(Error::InvalidTask { reason: Rejection::DeclarationTooLong { max: m }, .. }) if m == max as usize),
            "{n} items: {r:?}"
        );
    }
}
