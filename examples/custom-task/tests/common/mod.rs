//! User tasks through every path the built-in ones take, as scenarios run on both
//! backends: `custom_task_cpu.rs` (CI) and `custom_task_gpu.rs` (on a GPU,
//! `--include-ignored`). Fresh random inputs each time; every result is checked against
//! the host's reference (exact for integers, f64 for floats); outputs are poisoned first.
#![allow(dead_code)]

use custom_task::{histogram, poly, sum_squares};
use custom_task_device::{Compact, Histogram, HistogramSplit, Poly, Softmax, SumSplit, SumSquares, Total};
use rand::Rng;
use resident::builtin::ids;
use resident::{Buffer, DeviceTask, Error, Rejection, Runtime, Slice, Status, Task, TaskId};

const BINS: usize = 97;

/// Random data in a buffer, with its values.
fn random_data(rt: &Runtime, n: usize) -> (Vec<u32>, Buffer<u32>) {
    let mut rng = rand::rng();
    let data: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    let b = rt.buffer_from(&data).unwrap();
    (data, b)
}

/// Histogram tasks over `chunk`-element pieces of `data`.
fn histogram_tasks(data: &Buffer<u32>, bins: &Buffer<u32>, shift: u32, chunk: usize) -> Vec<Task> {
    (0..data.len().div_ceil(chunk))
        .map(|k| Histogram { data: data.slice(k * chunk..((k + 1) * chunk).min(data.len())), bins: bins.all(), shift }.task())
        .collect()
}

/// Host-fed batches of a user task, with inline results: every element counted once,
/// every task's result its length.
pub fn host_fed_batches(rt: &Runtime) {
    let (data, d) = random_data(rt, 300_007);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    for shift in [0, 3, 7] {
        bins.write(&[0; BINS]).unwrap();
        let tasks = histogram_tasks(&d, &bins, shift, 4096);
        // Several batches, of uneven sizes.
        let mut tickets = vec![];
        for part in tasks.chunks(17) {
            tickets.push((part.len(), rt.batch(part).results().submit().unwrap()));
        }
        let mut counted = 0;
        for (len, t) in tickets {
            let r = t.results().unwrap();
            assert_eq!(r.len(), len);
            counted += r.iter().sum::<u64>();
        }
        assert_eq!(counted, data.len() as u64, "every element counted once");
        assert_eq!(bins.read().unwrap(), histogram(&data, BINS, shift), "shift {shift}");
    }
}

/// A lone user task (the express path: its ticket resolves from its own record).
pub fn lone_task(rt: &Runtime) {
    let (data, d) = random_data(rt, 5_000);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    for _ in 0..20 {
        bins.write(&[0; BINS]).unwrap();
        let t = rt.batch(&[Histogram { data: d.all(), bins: bins.all(), shift: 2 }.task()]).results().submit().unwrap();
        assert_eq!(t.results().unwrap(), vec![5_000]);
        assert_eq!(bins.read().unwrap(), histogram(&data, BINS, 2));
    }
}

/// A resident list of user tasks, uploaded once and replayed: each replay counts again.
pub fn resident_list(rt: &Runtime) {
    let (data, d) = random_data(rt, 100_000);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    let list = rt.upload_tasks(&histogram_tasks(&d, &bins, 5, 1000)).unwrap();
    let want = histogram(&data, BINS, 5);
    for round in 1..=3u32 {
        list.submit().unwrap().wait().unwrap();
        let got = bins.read().unwrap();
        assert!(got.iter().zip(&want).all(|(g, w)| *g == round * w), "round {round}");
    }
}

/// User tasks that push user tasks on the device: the ticket waits for every child,
/// and every element is counted once.
pub fn spawned_on_device(rt: &Runtime) {
    let (data, d) = random_data(rt, 200_000);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    // Several splitting tasks in one batch, each over its own half, with different
    // chunk sizes (children of uneven lengths).
    let halves = [d.slice(0..100_000), d.slice(100_000..200_000)];
    let tasks: Vec<Task> =
        halves.iter().zip([1000, 777]).map(|(h, chunk)| HistogramSplit { data: *h, bins: bins.all(), shift: 4, chunk }.task()).collect();
    let pushed = rt.batch(&tasks).results().submit().unwrap().results().unwrap();
    assert_eq!(pushed, vec![100, 100_000u64.div_ceil(777)]);
    assert_eq!(bins.read().unwrap(), histogram(&data, BINS, 4));
}

/// Two stages joined by a device counter in one batch: partial sums signal, the total
/// waits for all of them.
pub fn counters_join_stages(rt: &Runtime) {
    let mut rng = rand::rng();
    let n: usize = 123_457;
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
    let xb = rt.buffer_from(&x).unwrap();
    let chunk = 3000;
    let parts = n.div_ceil(chunk) as u32;
    let partials = rt.buffer_from(&vec![f32::NAN; parts as usize]).unwrap();
    let total = rt.buffer_from(&[f32::NAN]).unwrap();
    let done = rt.counter().unwrap();
    for pass in 1..=2u32 {
        partials.write(&vec![f32::NAN; parts as usize]).unwrap();
        total.write(&[f32::NAN]).unwrap();
        // The total last: a task may wait only for tasks submitted before it (their
        // workers are running; a later task's slot may belong to the waiting warp).
        let mut batch: Vec<Task> = (0..parts as usize)
            .map(|k| {
                let x = xb.slice(k * chunk..((k + 1) * chunk).min(n));
                SumSquares { x, partials: partials.all(), index: k as u32 }.task().signals(done.id())
            })
            .collect();
        batch.push(Total { partials: partials.all(), total: total.all() }.task().after(done.id(), pass * parts));
        rt.submit(&batch).unwrap().wait().unwrap();
        let (got, want) = (total.read().unwrap()[0] as f64, sum_squares(&x));
        assert!((got - want).abs() / want < 1e-5, "pass {pass}: {got} against {want}");
        assert_eq!(done.value().unwrap(), pass * parts);
    }
}

/// A split on the device joined by a counter that its children signal: a `SumSplit`
/// (pushing a `SumPart` a partial), then `waiters` `Total`s waiting until every part
/// has signalled, more of them than the runtime has workers. The split goes at each of
/// the four positions of the sequence mod 4 in turn (with `worker_flags::SPARSE_LOOK` a
/// worker looks for children after every 4th queue task by sequence number): the
/// worker that ran it must run its children before it claims a waiting task, or every
/// worker ends up waiting for children that nobody runs. Each batch within 20 s; every
/// partial and every total checked against the host's f64 sums.
pub fn children_join_by_counter(rt: &Runtime, waiters: usize) {
    let mut rng = rand::rng();
    let (n, parts) = (50_000usize, 40u32);
    let x: Vec<f32> = (0..n).map(|_| rng.random_range(-2.0..2.0)).collect();
    let xb = rt.buffer_from(&x).unwrap();
    let chunk = n.div_ceil(parts as usize);
    let (partials, totals) = (rt.buffer::<f32>(parts as usize).unwrap(), rt.buffer::<f32>(waiters).unwrap());
    let done = rt.counter().unwrap();
    // The waiting `Total`s, each until `done` reaches `target`.
    let waiting = |target: u32| -> Vec<Task> {
        (0..waiters).map(|i| Total { partials: partials.all(), total: totals.slice(i..i + 1) }.task().after(done.id(), target)).collect()
    };
    for (pass, residue) in (1..).zip(0..4u64) {
        partials.write(&vec![f32::NAN; parts as usize]).unwrap();
        totals.write(&vec![f32::NAN; waiters]).unwrap();
        // The next sequence number, from a lone task's; noops before the split bring
        // it to `residue` mod 4.
        let probe = rt.submit(&[Task::noop(0)]).unwrap();
        probe.wait().unwrap();
        let pad = (residue + 4 - (probe.first_seq() + 1) % 4) % 4;
        let mut batch: Vec<Task> = (0..pad).map(Task::noop).collect();
        batch.push(SumSplit { x: xb.all(), partials: partials.all(), done: done.id() }.task());
        batch.extend(waiting(pass * parts));
        let t = rt.submit(&batch).unwrap();
        assert_eq!((t.first_seq() + pad) % 4, residue);
        if let Err(e) = t.wait_timeout(std::time::Duration::from_secs(20)) {
            panic!("split at {residue} mod 4: {e} (its children never ran?)");
        }
        let got = partials.read().unwrap();
        for (k, g) in got.iter().enumerate() {
            let want = sum_squares(&x[(k * chunk).min(n)..((k + 1) * chunk).min(n)]);
            assert!((*g as f64 - want).abs() <= 1e-5 * want.max(1.0), "part {k}: {g} against {want}");
        }
        let want = sum_squares(&x);
        for (i, g) in totals.read().unwrap().iter().enumerate() {
            assert!((*g as f64 - want).abs() / want < 1e-5, "total {i}: {g} against {want}");
        }
        assert_eq!(done.value().unwrap(), pass * parts);
    }
    // A split whose every part fails (its `x` forged to name a u32 buffer as f32s, the
    // host's check skipped): each part still signals, so the waiting tasks run and the
    // ticket reports the parts' failure instead of waiting for ever.
    let (_, u) = random_data(rt, n);
    let forged = Slice::<f32>::new(u.all().handle, 0, n as u32);
    let before = done.value().unwrap();
    let mut batch = vec![SumSplit { x: forged, partials: partials.all(), done: done.id() }.task()];
    batch.extend(waiting(before + parts));
    // SAFETY: the point of the test: the device refuses the forged slice in every part,
    // touching nothing it does not own.
    let t = unsafe { rt.batch(&batch).submit_unchecked() }.unwrap();
    match t.wait_timeout(std::time::Duration::from_secs(20)) {
        // The split's own record: its children failed (each with `BadBuffer`).
        Err(Error::TaskFailed { status: Status::ChildFailed, .. }) => {}
        other => panic!("a split whose parts fail: {other:?}"),
    }
    assert_eq!(done.value().unwrap(), before + parts, "every part signalled once");
}

/// Two user task types interleaved in one batch, one of them with arguments at the
/// 48-byte limit, and the built-in tasks beside them.
pub fn mixed_types_in_one_batch(rt: &Runtime) {
    let mut rng = rand::rng();
    let (data, d) = random_data(rt, 50_000);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    let x: Vec<f32> = (0..50_000).map(|_| rng.random_range(-1.0..1.0)).collect();
    let xb = rt.buffer_from(&x).unwrap();
    let y = rt.buffer_from(&vec![f32::NAN; 50_000]).unwrap();
    let c: [f32; 6] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
    assert_eq!(size_of::<Poly>(), resident::TASK_ARG_BYTES);
    let marks = rt.buffer::<u32>(50).unwrap();
    let mut batch = vec![];
    for k in 0..50 {
        let r = k * 1000..(k + 1) * 1000;
        batch.push(Histogram { data: d.slice(r.clone()), bins: bins.all(), shift: 1 }.task());
        batch.push(Poly { x: xb.slice(r.clone()), y: y.slice(r), c }.task());
        batch.push(Task::mark(marks.all(), k as u32));
    }
    let results = rt.batch(&batch).results().submit().unwrap().results().unwrap();
    assert!(results.chunks(3).all(|r| r[0] == 1000 && r[1] == 1000 && r[2] == 0));
    assert_eq!(bins.read().unwrap(), histogram(&data, BINS, 1));
    assert!(marks.read().unwrap().iter().all(|&m| m == 1));
    let worst = y.read().unwrap().iter().zip(&x).map(|(&g, &v)| (g as f64 - poly(&c, v)).abs()).fold(0.0, f64::max);
    assert!(worst < 1e-5, "poly: max abs error {worst:e}");
}

/// A user task whose declared slices are out of range, of the wrong element type, or
/// whose arguments are inconsistent, is refused before anything of its batch reaches the
/// device, with the reason typed; the device refuses the same tasks when the host check
/// is skipped.
pub fn declared_slices_checked(rt: &Runtime) {
    let (_, d) = random_data(rt, 1000);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    let f = rt.buffer::<f32>(1000).unwrap();
    let partials = rt.buffer::<f32>(4).unwrap();
    let cases: Vec<(Task, Rejection, Status)> = vec![
        (
            Histogram { data: d.all().with_offset(1), bins: bins.all(), shift: 0 }.task(),
            Rejection::OutOfRange { arg: 0, offset: 1, len: 1000 },
            Status::OutOfRange,
        ),
        (
            Histogram { data: d.all(), bins: bins.all().with_len(BINS as u32 + 1), shift: 0 }.task(),
            Rejection::OutOfRange { arg: 1, offset: 0, len: BINS as u32 + 1 },
            Status::OutOfRange,
        ),
        // An f32 buffer named as u32 bins (the types forbid it; a forged slice does it).
        (
            Histogram { data: d.all(), bins: Slice::new(f.all().handle, 0, 10), shift: 0 }.task(),
            Rejection::BadBuffer { arg: 1, handle: f.all().handle.0 },
            Status::BadBuffer,
        ),
        (Histogram { data: d.all(), bins: bins.all(), shift: 40 }.task(), Rejection::BadArgs("shift must be below 32"), Status::BadArgs),
        (Poly { x: f.slice(0..10), y: f.slice(0..11), c: [0.0; 6] }.task(), Rejection::LengthMismatch(10, 11), Status::BadArgs),
        (
            SumSquares { x: f.all(), partials: partials.all(), index: 4 }.task(),
            Rejection::IndexOutOfRange { index: 4, len: 4 },
            Status::OutOfRange,
        ),
    ];
    for (i, (bad, why, device)) in cases.into_iter().enumerate() {
        bins.write(&[0; BINS]).unwrap();
        let good = Histogram { data: d.all(), bins: bins.all(), shift: 0 }.task();
        match rt.submit(&[good, bad, good]) {
            Err(Error::InvalidTask { index: 1, reason }) => assert_eq!(reason, why, "case {i}"),
            other => panic!("case {i}: expected a typed refusal of task 1, got {other:?}"),
        }
        assert!(bins.read().unwrap().iter().all(|&b| b == 0), "case {i}: nothing of a refused batch ran");
        // The device's own check, with the host's skipped.
        // SAFETY: the point of the test: the device must refuse the task, touching
        // nothing it does not own.
        let t = unsafe { rt.batch(&[bad]).submit_unchecked() }.unwrap();
        assert!(matches!(t.wait(), Err(Error::TaskFailed { status, .. }) if status == device), "case {i}: device");
    }
    // A splitting task whose children would be too many.
    let split = HistogramSplit { data: d.all(), bins: bins.all(), shift: 0, chunk: 1 };
    assert!(matches!(rt.submit(&[split.task()]), Err(Error::InvalidTask { reason: Rejection::BadArgs(_), .. })));
}

/// A runtime of the set without the built-in tasks: its own tasks run, the built-in
/// ones and the types it does not hold are refused on the host (typed) and on the
/// device.
pub fn set_without_builtins(rt: &Runtime) {
    let image = rt.kernel_image();
    assert!(!image.task_ids().contains(&ids::NOOP) && image.task_ids().contains(&Histogram::ID));
    let (data, d) = random_data(rt, 20_000);
    let bins = rt.buffer::<u32>(BINS).unwrap();
    rt.submit(&histogram_tasks(&d, &bins, 3, 2000)).unwrap().wait().unwrap();
    assert_eq!(bins.read().unwrap(), histogram(&data, BINS, 3));
    assert!(matches!(rt.submit(&[Task::noop(1)]), Err(Error::InvalidTask { reason: Rejection::UnknownTask(TaskId(1)), .. })));
    let split = HistogramSplit { data: d.all(), bins: bins.all(), shift: 0, chunk: 1000 };
    assert!(matches!(rt.submit(&[split.task()]), Err(Error::InvalidTask { reason: Rejection::UnknownTask(_), .. })));
    // SAFETY: the device must refuse an id its set does not hold.
    let t = unsafe { rt.batch(&[Task::noop(1)]).submit_unchecked() }.unwrap();
    assert!(matches!(t.wait(), Err(Error::TaskFailed { status: Status::InvalidOpcode, .. })));
}

/// The task author's toolbox on both backends: a softmax (warp maximum and sum,
/// `resident_device::math::expf`, an `[f32; 2]` inline result) and a stream compaction
/// (an exclusive warp scan and a broadcast), each slice a task, against f64 and exact
/// references, outputs poisoned first.
pub fn toolbox(rt: &Runtime) {
    let mut rng = rand::rng();
    let lens = [1usize, 31, 32, 33, 100, 1000, 4099];
    let xs: Vec<Vec<f32>> = lens.iter().map(|&n| (0..n).map(|_| rng.random_range(-20.0f32..20.0)).collect()).collect();
    let flat: Vec<f32> = xs.concat();
    let x = rt.buffer_from(&flat).unwrap();
    let out = rt.buffer_from(&vec![f32::NAN; flat.len()]).unwrap();
    let mut at = 0;
    let mut slices = vec![];
    for &n in &lens {
        slices.push(at..at + n);
        at += n;
    }
    let tasks: Vec<Task> = slices.iter().map(|r| Softmax { x: x.slice(r.clone()), out: out.slice(r.clone()) }.task()).collect();
    let stats = rt.batch(&tasks).results().submit().unwrap().results_as::<[f32; 2]>().unwrap();
    let got = out.read().unwrap();
    for ((r, xs), [max, sum]) in slices.iter().zip(&xs).zip(stats) {
        let m = xs.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
        let s: f64 = xs.iter().map(|&v| (v as f64 - m).exp()).sum();
        assert_eq!(max as f64, m, "the warp's maximum is exact");
        assert!(((sum as f64) - s).abs() <= 1e-5 * s, "sum {sum} against {s}");
        for (g, &v) in got[r.clone()].iter().zip(xs) {
            let want = (v as f64 - m).exp() / s;
            assert!((*g as f64 - want).abs() <= 1e-6 + 1e-5 * want, "softmax {g} against {want}");
        }
    }
    let threshold = rng.random_range(-5.0f32..5.0);
    let packed = rt.buffer_from(&vec![f32::NAN; flat.len()]).unwrap();
    let tasks: Vec<Task> =
        slices.iter().map(|r| Compact { x: x.slice(r.clone()), out: packed.slice(r.clone()), threshold }.task()).collect();
    let counts = rt.batch(&tasks).results().submit().unwrap().results().unwrap();
    let got = packed.read().unwrap();
    for ((r, xs), count) in slices.iter().zip(&xs).zip(counts) {
        let want: Vec<f32> = xs.iter().copied().filter(|&v| v > threshold).collect();
        assert_eq!(count as usize, want.len());
        assert_eq!(&got[r.start..r.start + want.len()], &want[..], "kept in order");
        assert!(got[r.start + want.len()..r.end].iter().all(|v| v.is_nan()), "nothing past the kept ones");
    }
}
