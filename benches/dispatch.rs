//! 20,000 tiny tasks, three ways, in one run: the persistent runtime (submit the batch,
//! wait for its last completion), one kernel launch per task, and those launches
//! captured once into a CUDA Graph and replayed. Tasks: `noop` (pure dispatch cost) and
//! `axpy` on 1024 floats (memory-bound: 12 KiB moved per task), with two ceilings
//! measured beside them: the device's own copy of the same bytes, and the axpy task's
//! loop over every slice in one flat launch (no dispatch at all).
//!
//! Timing: host wall clock around an operation that ends synchronized (the host has
//! seen the last completion, or the stream has finished), warmed up, medians. After
//! criterion's groups, a summary table of medians and ratios from this same run.
//!
//!     cargo bench --bench dispatch                      # the defaults, lists a slot per task, the defaults again, the rivals
//!     DISPATCH_SWEEP=1 cargo bench --bench dispatch     # the configuration's knobs, one at a time
//!     DISPATCH_TIMELINE=1 cargo bench --bench dispatch  # when a 20k batch is published and done
//!     DISPATCH_LIST_SIZES=1,2112,20000 cargo bench --bench dispatch  # noop lists by length

mod common;

use common::baselines::Baselines;
use common::median;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use resident::{Buffer, Runtime, RuntimeConfig, Task};
use std::time::{Duration, Instant};

const TASKS: usize = 20_000;
const SLICE: usize = 1024;
/// Bytes an axpy task moves: read x, read y, write y.
const AXPY_BYTES: u64 = (TASKS * SLICE * 4 * 3) as u64;

struct Work {
    noop: Vec<Task>,
    axpy: Vec<Task>,
    /// Three kinds interleaved: noop, axpy (on the same slices as `axpy`), mark.
    mix: Vec<Task>,
    _x: Buffer<f32>,
    _y: Buffer<f32>,
    _marks: Buffer<u32>,
}

fn work(rt: &Runtime) -> Work {
    let xs: Vec<f32> = (0..TASKS * SLICE).map(|i| (i % 977) as f32 * 1e-3).collect();
    let x = rt.buffer_from(&xs).unwrap();
    let y = rt.buffer::<f32>(TASKS * SLICE).unwrap();
    let noop = (0..TASKS as u64).map(Task::noop).collect();
    let axpy: Vec<Task> =
        (0..TASKS).map(|i| Task::axpy(1e-3, x.slice(i * SLICE..(i + 1) * SLICE), y.slice(i * SLICE..(i + 1) * SLICE))).collect();
    let marks = rt.buffer::<u32>(TASKS).unwrap();
    let mix = (0..TASKS)
        .map(|i| match i % 3 {
            0 => Task::noop(i as u64),
            1 => axpy[i],
            _ => Task::mark(marks.all(), i as u32),
        })
        .collect();
    Work { noop, axpy, mix, _x: x, _y: y, _marks: marks }
}

fn persistent(rt: &Runtime, tasks: &[Task]) {
    rt.submit(tasks).unwrap().wait().unwrap();
}

/// The same batch through `Batch::pipelined`: checked as it is published (no barrier
/// before the first piece; a refusal would leave the checked prefix run).
fn pipelined(rt: &Runtime, tasks: &[Task]) {
    rt.batch(tasks).pipelined().submit().unwrap().wait().unwrap();
}

/// The same batch through `Batch::submit_unchecked`: no host check, so nothing waits for one.
fn unchecked(rt: &Runtime, tasks: &[Task]) {
    // SAFETY: noop and axpy tasks over live buffers of `rt`; no terminate sentinel.
    unsafe { rt.batch(tasks).submit_unchecked() }.unwrap().wait().unwrap();
}

/// The same batch written in place through a reservation, checked 1024 tasks at a
/// time as they are written: its pieces are committed while the rest is written.
fn reserved(rt: &Runtime, tasks: &[Task]) {
    let mut r = rt.reserve(tasks.len()).unwrap();
    for part in tasks.chunks(1024) {
        r.extend(part).unwrap();
    }
    r.commit().unwrap().wait().unwrap();
}

/// DISPATCH_TIMELINE=1: when the tasks of one 20k batch are published and completed,
/// as the host sees it. An observer thread reads `Probe::published` and
/// `Probe::completed` without pause while the batch runs and notes when each first
/// passes each mark (tasks of the batch, in order); the medians over the runs, from just
/// before the submit. With the time the submit call returned and the wait ended:
/// whether the device waits for the host's pieces (completions follow publication
/// closely) or the host waits for the device. (Not `Probe::relayed`: the relay echoes
/// it only when a poll finds nothing new, so it lags a busy batch.)
fn timeline(rt: &Runtime, tasks: &[Task], label: &str, submit: &(dyn Fn(&Runtime, &[Task]) -> resident::Ticket + Sync)) {
    use std::sync::atomic::{AtomicBool, Ordering};
    const MARKS: [usize; 10] = [128, 512, 1024, 2048, 4096, 8192, 12_288, 16_384, 19_456, TASKS];
    const WHAT: [&str; 2] = ["published", "done"];
    let (warm, runs) = (10, 41);
    // Profiling builds (`RESIDENT_DEVICE_TIMING`): the workers' cycles per step over
    // these batches (docs/profiling.md).
    let steps_before = rt.probe().device_steps();
    #[cfg(feature = "phase-timing")]
    resident::__phases_take();
    let mut at: Vec<Vec<Vec<f64>>> = vec![vec![vec![]; MARKS.len()]; WHAT.len()];
    let (mut returned, mut done) = (vec![], vec![]);
    for r in 0..warm + runs {
        let counts = || [rt.probe().published(), rt.probe().completed()];
        let base = counts();
        let (ready, go) = (AtomicBool::new(false), AtomicBool::new(false));
        let start = std::sync::OnceLock::new();
        let seen = std::thread::scope(|s| {
            let observer = s.spawn(|| {
                ready.store(true, Ordering::Release);
                while !go.load(Ordering::Acquire) {
                    std::hint::spin_loop();
                }
                let t0: Instant = *start.get().unwrap();
                let mut seen = vec![vec![f64::NAN; MARKS.len()]; WHAT.len()];
                let mut next = [0; WHAT.len()];
                while next[1] < MARKS.len() {
                    let c = counts();
                    let t = t0.elapsed().as_secs_f64() * 1e6;
                    for w in 0..WHAT.len() {
                        let c = c[w].saturating_sub(base[w]) as usize;
                        while next[w] < MARKS.len() && c >= MARKS[next[w]] {
                            seen[w][next[w]] = t;
                            next[w] += 1;
                        }
                    }
                }
                seen
            });
            while !ready.load(Ordering::Acquire) {
                std::hint::spin_loop();
            }
            let t0 = Instant::now();
            start.set(t0).unwrap();
            go.store(true, Ordering::Release);
            let ticket = submit(rt, tasks);
            let back = t0.elapsed().as_secs_f64() * 1e6;
            ticket.wait().unwrap();
            let end = t0.elapsed().as_secs_f64() * 1e6;
            if r >= warm {
                returned.push(back);
                done.push(end);
            }
            observer.join().unwrap()
        });
        if r >= warm {
            for (w, seen) in seen.into_iter().enumerate() {
                for (k, t) in seen.into_iter().enumerate() {
                    at[w][k].push(t);
                }
            }
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!("timeline {label}: submit returned {:.1} us, wait ended {:.1} us", med(&mut returned), med(&mut done));
    // (A relaunch in between would restart the warps' counts: then no figure.)
    common::print_device_steps("  ", steps_before, rt.probe().device_steps());
    // Profiling builds (`phase-timing`): where the submitting threads' time went.
    #[cfg(feature = "phase-timing")]
    println!("  phases:\n{}", resident::__phases_take());
    for (w, at) in WHAT.iter().zip(&mut at) {
        let marks: Vec<String> = MARKS.iter().zip(at.iter_mut()).map(|(m, v)| format!("{m}: {:.1}", med(v))).collect();
        println!("  {w:>9} by (us): {}", marks.join(", "));
    }
}

fn config(claim: u32) -> RuntimeConfig {
    // 64 Ki slots: a 20k batch fits whole; a resident list goes in as one run.
    RuntimeConfig { claim, capacity: 1 << 16, ..RuntimeConfig::default() }
}

/// Host cost of staging one batch of tasks: a copy into pinned memory of each kind.
/// Runs with no persistent kernel resident: freeing pinned memory synchronizes the
/// context, which would wait forever on a resident kernel.
fn staging_probe() {
    let rt = Runtime::new().unwrap();
    rt.close().unwrap();
    let gpu = rt.device().unwrap();
    progress("staging probe: runtime closed");
    let src: Vec<Task> = (0..TASKS as u64).map(Task::noop).collect();
    let bytes = size_of_val(&src[..]);
    for wc in [false, true] {
        let mut dst = if wc { gpu.pinned_write_combined::<Task>(TASKS) } else { gpu.pinned::<Task>(TASKS) }.unwrap();
        let t = median(|| dst.copy_from_slice(&src), 20, 101);
        eprintln!(
            "staging {TASKS} tasks ({bytes} B) into pinned {}: {:.1} us",
            if wc { "write-combined" } else { "cached" },
            t.as_secs_f64() * 1e6
        );
    }
    drop(rt);
}

fn progress(what: &str) {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    eprintln!("[{:7.1}s] {what}", START.get_or_init(Instant::now).elapsed().as_secs_f64());
}

/// Noop lists by length, submit to done, medians of 101 after 20: in chunks (the
/// default), a queue slot per task, the table rival (one launch over the same tasks,
/// then a synchronize), and the same tasks submitted from the host. What a list costs that its length does not explain
/// (publication, claims, completion counts, the host seeing the end) against what each
/// task adds.
fn list_sizes(base: &RuntimeConfig, sizes: &[usize]) {
    let mut rows: Vec<Vec<Duration>> = vec![vec![]; sizes.len()];
    for (i, slot_tasks) in [0u32, 1].into_iter().enumerate() {
        let rt = Runtime::with_config(RuntimeConfig { list_slot_tasks: slot_tasks, ..base.clone() }).unwrap();
        if i == 0 {
            eprintln!("{}", rt.backend());
        }
        for (row, &n) in rows.iter_mut().zip(sizes) {
            let tasks: Vec<Task> = (0..n).map(|k| Task::noop(k as u64)).collect();
            let list = rt.upload_tasks(&tasks).unwrap();
            row.push(median(|| list.submit().unwrap().wait().unwrap(), 20, 101));
            if i == 0 {
                // The same tasks from the host (one alone goes the express path).
                row.push(median(|| rt.submit(&tasks).unwrap().wait().unwrap(), 20, 101));
            }
        }
        if i == 1 {
            let b = Baselines::new(&rt, *sizes.iter().max().unwrap()).unwrap();
            for (row, &n) in rows.iter_mut().zip(sizes) {
                let tasks: Vec<Task> = (0..n).map(|k| Task::noop(k as u64)).collect();
                let table = b.table(&rt, &tasks).unwrap();
                row.push(median(|| b.run_table(&table).unwrap(), 20, 101));
            }
        }
        rt.shutdown().unwrap();
    }
    println!("\nnoop lists by length, submit to done, us, medians of 101 after 20");
    println!("{:>8} {:>10} {:>14} {:>10} {:>10}", "tasks", "chunks", "slot per task", "table", "host batch");
    for (row, &n) in rows.iter().zip(sizes) {
        let us = |d: &Duration| format!("{:.1}", d.as_secs_f64() * 1e6);
        println!("{n:>8} {:>10} {:>14} {:>10} {:>10}", us(&row[0]), us(&row[2]), us(&row[3]), us(&row[1]));
    }
}

fn bench(c: &mut Criterion) {
    if !resident::cuda_available() {
        eprintln!("dispatch: no CUDA GPU here; benchmarking the CPU backend only (no baselines)");
        let rt = Runtime::new().unwrap();
        let w = work(&rt);
        let mut g = c.benchmark_group("cpu_backend");
        g.throughput(Throughput::Elements(TASKS as u64));
        g.bench_function("noop_20k", |b| b.iter(|| persistent(&rt, &w.noop)));
        g.finish();
        return;
    }

    use resident::worker_flags::{PRECLAIM, RELEASE_COUNT, SPARSE_LOOK};
    let base = config(1);
    if std::env::var_os("DISPATCH_TIMELINE").is_some() {
        // A queue slot per list task: the observer counts tasks by sequence number.
        let rt = Runtime::with_config(RuntimeConfig { list_slot_tasks: 1, ..base }).unwrap();
        eprintln!("{}", rt.backend());
        let w = work(&rt);
        let (noop_list, axpy_list) = (rt.upload_tasks(&w.noop).unwrap(), rt.upload_tasks(&w.axpy).unwrap());
        for (name, tasks, list) in [("noop", &w.noop, &noop_list), ("axpy", &w.axpy, &axpy_list)] {
            timeline(&rt, tasks, &format!("{name}, submit"), &|rt, t| rt.submit(t).unwrap());
            timeline(&rt, tasks, &format!("{name}, submit_pipelined"), &|rt, t| rt.batch(t).pipelined().submit().unwrap());
            timeline(&rt, tasks, &format!("{name}, resident list"), &|_, _| list.submit().unwrap());
        }
        return;
    }
    if let Some(sizes) = std::env::var_os("DISPATCH_LIST_SIZES") {
        let sizes: Vec<usize> = sizes
            .to_str()
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().parse().ok().filter(|&n| n > 0).expect("DISPATCH_LIST_SIZES: task counts, comma-separated"))
            .collect();
        list_sizes(&base, &sizes);
        return;
    }
    // (label, config, host-fed rows, criterion groups, the rivals after it). By default
    // the defaults twice (the second an order check, with the rivals after it); with
    // DISPATCH_SWEEP=1 a sweep of the configuration's knobs, one change each, summary
    // medians only, the defaults again at the end with the rivals.
    let variants: Vec<(&str, RuntimeConfig, bool, bool, bool)> = if std::env::var_os("DISPATCH_SWEEP").is_some() {
        let flags = |f: u32| RuntimeConfig { worker_flags: f, ..base.clone() };
        vec![
            ("defaults", base.clone(), true, false, false),
            ("preclaim", flags(base.worker_flags | PRECLAIM), true, false, false),
            ("acq_rel count adds", flags(base.worker_flags & !RELEASE_COUNT), true, false, false),
            ("look for children after every task", flags(base.worker_flags & !SPARSE_LOOK), true, false, false),
            ("claim 2", config(2), true, false, false),
            ("claim 8", config(8), true, false, false),
            ("128-thread blocks, 5 per SM", RuntimeConfig { block_threads: 128, max_blocks_per_sm: 5, ..base.clone() }, true, false, false),
            ("poll sleep <= 128 ns", RuntimeConfig { max_poll_sleep_ns: 128, ..base.clone() }, false, false, false),
            ("segments of 256", RuntimeConfig { segment_tasks: 256, ..base.clone() }, true, false, false),
            ("segments of 64", RuntimeConfig { segment_tasks: 64, ..base.clone() }, true, false, false),
            ("list in one piece", RuntimeConfig { list_chunk: 0, ..base.clone() }, false, false, false),
            ("a queue slot per list task", RuntimeConfig { list_slot_tasks: 1, ..base.clone() }, false, false, false),
            ("4 list tasks a slot", RuntimeConfig { list_slot_tasks: 4, ..base.clone() }, false, false, false),
            ("32 list tasks a slot", RuntimeConfig { list_slot_tasks: 32, ..base.clone() }, false, false, false),
            ("list first piece 1024", RuntimeConfig { list_first_piece: 1024, ..base.clone() }, false, false, false),
            ("host runs of 4096", RuntimeConfig { publish_chunk: 4096, ..base.clone() }, true, false, false),
            ("host runs of 512", RuntimeConfig { publish_chunk: 512, ..base.clone() }, true, false, false),
            ("full 64-byte host records", RuntimeConfig { compact_records: false, ..base.clone() }, true, false, false),
            ("write-combined host ring", RuntimeConfig { staging_write_combined: true, ..base.clone() }, true, false, false),
            ("ordinary stores into the host ring", RuntimeConfig { stage_streaming: false, ..base.clone() }, true, false, false),
            (
                "submit helpers sleep between passes",
                RuntimeConfig { submit_spin: Some(Duration::ZERO), ..base.clone() },
                true,
                false,
                false,
            ),
            (
                "submit helpers linger 1 ms",
                RuntimeConfig { submit_spin: Some(Duration::from_millis(1)), ..base.clone() },
                true,
                false,
                false,
            ),
            ("1 submit thread", RuntimeConfig { submit_threads: 1, ..base.clone() }, true, false, false),
            ("16 submit threads", RuntimeConfig { submit_threads: 16, ..base.clone() }, true, false, false),
            ("staging + copies, no relay publication", RuntimeConfig { relay_publish: false, ..base.clone() }, true, false, false),
            ("defaults again", base.clone(), true, false, true),
        ]
    } else {
        vec![
            ("defaults", base.clone(), true, true, false),
            ("a queue slot per list task", RuntimeConfig { list_slot_tasks: 1, ..base.clone() }, false, false, false),
            ("defaults again", base.clone(), true, false, true),
        ]
    };
    let mut summary = vec![];
    // The mix of three kinds: (row, median), the table rival's row among them.
    let mut mixes: Vec<(String, Duration)> = vec![];
    for (label, cfg, host_fed, groups, baselines) in variants {
        progress(label);
        let rt = Runtime::with_config(cfg).unwrap();
        eprintln!("{} ({label})", rt.backend());
        let id = label.replace([',', ' ', '+', '/'], "_");
        let w = work(&rt);
        if host_fed && groups {
            let mut g = c.benchmark_group("noop_20k");
            g.throughput(Throughput::Elements(TASKS as u64));
            g.bench_function(BenchmarkId::new("persistent", &id), |b| b.iter(|| persistent(&rt, &w.noop)));
            g.finish();
            let mut g = c.benchmark_group("axpy_20k_x1024");
            g.throughput(Throughput::Bytes(AXPY_BYTES));
            g.bench_function(BenchmarkId::new("persistent", &id), |b| b.iter(|| persistent(&rt, &w.axpy)));
            g.finish();
        }
        if host_fed {
            #[cfg(feature = "phase-timing")]
            resident::__phases_take();
            let noop = median(|| persistent(&rt, &w.noop), 20, 101);
            // Where the submitting threads' time went (profiling builds: the pass's
            // threads' join, checks, barrier and staging, from the pass's start).
            #[cfg(feature = "phase-timing")]
            eprintln!("phases, host-fed noop, {label}:\n{}", resident::__phases_take());
            let axpy = median(|| persistent(&rt, &w.axpy), 10, 51);
            #[cfg(feature = "phase-timing")]
            eprintln!("phases, host-fed axpy, {label}:\n{}", resident::__phases_take());
            summary.push((format!("host-fed, {label}"), noop, axpy));
            summary.push((
                format!("host-fed pipelined, {label}"),
                median(|| pipelined(&rt, &w.noop), 20, 101),
                median(|| pipelined(&rt, &w.axpy), 10, 51),
            ));
            // Without the host's check (the device checks every slice again): pieces are
            // staged and published as they go. But `Batch::submit_unchecked` keeps results:
            // every task writes its completion record to the host, and the wait reads
            // them all, so this row is not the checked row minus its check.
            summary.push((
                format!("host-fed unchecked + results, {label}"),
                median(|| unchecked(&rt, &w.noop), 20, 101),
                median(|| unchecked(&rt, &w.axpy), 10, 51),
            ));
            summary.push((
                format!("reservation, {label}"),
                median(|| reserved(&rt, &w.noop), 20, 101),
                median(|| reserved(&rt, &w.axpy), 10, 51),
            ));
        }
        {
            // The same batches as resident task lists: uploaded once, replayed as list
            // runs read in place by the workers (the counterpart of graph replay).
            let (noop_list, axpy_list) = (rt.upload_tasks(&w.noop).unwrap(), rt.upload_tasks(&w.axpy).unwrap());
            let replay = |l: &resident::TaskList| l.submit().unwrap().wait().unwrap();
            if groups {
                let mut g = c.benchmark_group("noop_20k");
                g.throughput(Throughput::Elements(TASKS as u64));
                g.bench_function(BenchmarkId::new("persistent_list", &id), |b| b.iter(|| replay(&noop_list)));
                g.finish();
                let mut g = c.benchmark_group("axpy_20k_x1024");
                g.throughput(Throughput::Bytes(AXPY_BYTES));
                g.bench_function(BenchmarkId::new("persistent_list", &id), |b| b.iter(|| replay(&axpy_list)));
                g.finish();
            }
            summary.push((format!("list, {label}"), median(|| replay(&noop_list), 20, 101), median(|| replay(&axpy_list), 10, 51)));
            let mix_list = rt.upload_tasks(&w.mix).unwrap();
            mixes.push((format!("list, {label}"), median(|| replay(&mix_list), 10, 51)));
        }
        if host_fed {
            // Where the time goes: submit (validate, stage, publish) vs waiting.
            let (mut sub, mut wait) = (vec![], vec![]);
            for _ in 0..51 {
                let s = Instant::now();
                let t = rt.submit(&w.noop).unwrap();
                sub.push(s.elapsed());
                let s = Instant::now();
                t.wait().unwrap();
                wait.push(s.elapsed());
            }
            sub.sort();
            wait.sort();
            // One noop, submit to done: the round trip in the host-fed bound (1.2 x (the
            // batch's memcpy + the round trip), as benches/floor/host_floor.cu prints it).
            let rt1 = median(|| persistent(&rt, &w.noop[..1]), 100, 1001);
            eprintln!(
                "{label}: noop batch split: submit {:.1} us, then wait {:.1} us (medians); one-task round trip {:.2} us",
                sub[25].as_secs_f64() * 1e6,
                wait[25].as_secs_f64() * 1e6,
                rt1.as_secs_f64() * 1e6
            );
        }

        if baselines {
            // The baselines run with the persistent kernel stopped (buffers, module and
            // table stay): nothing resident beside them, and no driver call (graph
            // instantiation, frees) can wait on a kernel that never ends.
            rt.close().unwrap();
            progress("baselines");
            let base = Baselines::new(&rt, TASKS).unwrap();
            let (noop, axpy) = (base.prepare(&rt, &w.noop).unwrap(), base.prepare(&rt, &w.axpy).unwrap());
            progress("capture noop graphs");
            let noop_graph = base.capture_graph(&noop, false).unwrap();
            let noop_graph_pdl = base.capture_graph(&noop, true).unwrap();
            progress("capture axpy graphs");
            let axpy_graph = base.capture_graph(&axpy, false).unwrap();
            let axpy_graph_pdl = base.capture_graph(&axpy, true).unwrap();
            let (src, dst) = base.copy_buffers(AXPY_BYTES as usize / 2).unwrap();
            // The launch a CUDA programmer writes for a known set of tasks: one launch
            // over the task table, a warp per task (from device memory, and fed from the
            // host: records into pinned memory, one copy, one launch, one synchronize).
            let (noop_table, axpy_table) = (base.table(&rt, &w.noop).unwrap(), base.table(&rt, &w.axpy).unwrap());
            let (mut noop_fed, mut axpy_fed) = (base.table(&rt, &w.noop).unwrap(), base.table(&rt, &w.axpy).unwrap());
            progress("criterion baselines");

            let mut g = c.benchmark_group("noop_20k");
            g.throughput(Throughput::Elements(TASKS as u64));
            g.sample_size(10);
            g.bench_function("table_one_launch", |b| b.iter(|| base.run_table(&noop_table).unwrap()));
            g.bench_function("table_host_fed", |b| b.iter(|| base.host_fed_table(&mut noop_fed).unwrap()));
            g.bench_function("launch_per_task", |b| b.iter(|| base.launch_per_task(&noop, false).unwrap()));
            g.bench_function("graph_replay", |b| b.iter(|| base.replay(&noop_graph).unwrap()));
            g.bench_function("graph_replay_pdl", |b| b.iter(|| base.replay(&noop_graph_pdl).unwrap()));
            g.finish();
            let mut g = c.benchmark_group("axpy_20k_x1024");
            g.throughput(Throughput::Bytes(AXPY_BYTES));
            g.sample_size(10);
            g.bench_function("table_one_launch", |b| b.iter(|| base.run_table(&axpy_table).unwrap()));
            g.bench_function("table_host_fed", |b| b.iter(|| base.host_fed_table(&mut axpy_fed).unwrap()));
            g.bench_function("launch_per_task", |b| b.iter(|| base.launch_per_task(&axpy, false).unwrap()));
            g.bench_function("graph_replay", |b| b.iter(|| base.replay(&axpy_graph).unwrap()));
            g.bench_function("graph_replay_pdl", |b| b.iter(|| base.replay(&axpy_graph_pdl).unwrap()));
            g.bench_function("device_copy_same_bytes", |b| b.iter(|| base.copy(&src, &dst).unwrap()));
            g.bench_function("axpy_loop_one_flat_launch", |b| b.iter(|| base.axpy_flat(1e-3, &w._x, &w._y, SLICE).unwrap()));
            g.finish();

            progress("baseline medians");
            summary.push((
                TABLE.into(),
                median(|| base.run_table(&noop_table).unwrap(), 20, 101),
                median(|| base.run_table(&axpy_table).unwrap(), 10, 51),
            ));
            let mix_table = base.table(&rt, &w.mix).unwrap();
            mixes.push((TABLE.into(), median(|| base.run_table(&mix_table).unwrap(), 10, 51)));
            drop(mix_table);
            summary.push((
                TABLE_FED.into(),
                median(|| base.host_fed_table(&mut noop_fed).unwrap(), 20, 101),
                median(|| base.host_fed_table(&mut axpy_fed).unwrap(), 10, 51),
            ));
            summary.push((
                "one launch per task".into(),
                median(|| base.launch_per_task(&noop, false).unwrap(), 3, 21),
                median(|| base.launch_per_task(&axpy, false).unwrap(), 3, 21),
            ));
            summary.push((
                "one launch per task, PDL".into(),
                median(|| base.launch_per_task(&noop, true).unwrap(), 3, 21),
                median(|| base.launch_per_task(&axpy, true).unwrap(), 3, 21),
            ));
            summary.push((
                "CUDA Graph replay".into(),
                median(|| base.replay(&noop_graph).unwrap(), 3, 21),
                median(|| base.replay(&axpy_graph).unwrap(), 3, 21),
            ));
            summary.push((
                "CUDA Graph replay, PDL".into(),
                median(|| base.replay(&noop_graph_pdl).unwrap(), 3, 21),
                median(|| base.replay(&axpy_graph_pdl).unwrap(), 3, 21),
            ));
            summary.push(("device copy, same bytes".into(), Duration::ZERO, median(|| base.copy(&src, &dst).unwrap(), 5, 51)));
            // The tasks' own loop with no dispatch at all: the ceiling for the list.
            summary.push((
                "axpy loop, one flat launch (no dispatch)".into(),
                Duration::ZERO,
                median(|| base.axpy_flat(1e-3, &w._x, &w._y, SLICE).unwrap(), 5, 51),
            ));
            drop((noop_graph, noop_graph_pdl, axpy_graph, axpy_graph_pdl, src, dst, noop_table, axpy_table, noop_fed, axpy_fed, base));
        }
        progress("shutdown");
        rt.shutdown().unwrap();
        progress("shut down");
        drop(w);
        progress("buffers dropped");
    }
    print_summary(&summary);
    if let Some((_, table)) = mixes.iter().find(|m| m.0 == TABLE) {
        println!("\nmix of three kinds (noop, axpy, mark interleaved), {TASKS} tasks: us, x rival (the table's time over the row's)");
        for (name, t) in &mixes {
            println!("{name:<44} {:>12.1} {:>9.2}", t.as_secs_f64() * 1e6, table.as_secs_f64() / t.as_secs_f64());
        }
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    progress("staging probe");
    staging_probe();
}

/// The rival rows: one launch over the task table, from device memory and fed from
/// the host (`Baselines::run_table`, `Baselines::host_fed_table`).
const TABLE: &str = "one launch over the table (rival)";
const TABLE_FED: &str = "host-fed table: pinned, copy, launch (rival)";

fn print_summary(rows: &[(String, Duration, Duration)]) {
    let find = |name: &str| rows.iter().find(|r| r.0 == name).unwrap();
    // Ratios against the strongest rival of each shape (the table, from the device or
    // fed from the host: > 1 is faster than it), against one launch per task and
    // against a CUDA Graph with programmatic dependent launch.
    let (launch, graph, copy) = (find("one launch per task"), find("CUDA Graph replay, PDL"), find("device copy, same bytes"));
    let (table, fed) = (find(TABLE), find(TABLE_FED));
    let copy_bw = AXPY_BYTES as f64 / copy.2.as_secs_f64() / 1e9;
    println!(
        "\nsummary: {TASKS} tasks per batch, medians of this run; x rival: the table's time over this row's (noop / axpy; host-fed rows against the host-fed table)"
    );
    println!(
        "{:<44} {:>12} {:>12} {:>9} {:>9} | {:>12} {:>9} {:>8} | {:>7} {:>7}",
        "variant", "noop us", "M tasks/s", "x launch", "x g+PDL", "axpy us", "GB/s", "% copy", "x rival", "(axpy)"
    );
    for (name, noop, axpy) in rows {
        let (n_us, a_us) = (noop.as_secs_f64() * 1e6, axpy.as_secs_f64() * 1e6);
        let rate = TASKS as f64 / noop.as_secs_f64() / 1e6;
        let gbs = AXPY_BYTES as f64 / axpy.as_secs_f64() / 1e9;
        if noop.is_zero() {
            println!("{name:<44} {:>12} {:>12} {:>9} {:>9} | {a_us:>12.1} {gbs:>9.0} {:>7.0}%", "-", "-", "-", "-", 100.0 * gbs / copy_bw);
        } else {
            let rival = if name.starts_with("host-fed") { fed } else { table };
            println!(
                "{name:<44} {n_us:>12.1} {rate:>12.2} {:>9.1} {:>9.1} | {a_us:>12.1} {gbs:>9.0} {:>7.0}% | {:>7.2} {:>7.2}",
                launch.1.as_secs_f64() / noop.as_secs_f64(),
                graph.1.as_secs_f64() / noop.as_secs_f64(),
                100.0 * gbs / copy_bw,
                rival.1.as_secs_f64() / noop.as_secs_f64(),
                rival.2.as_secs_f64() / axpy.as_secs_f64()
            );
        }
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
