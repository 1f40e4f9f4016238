//! Stress: many producer threads submit tiny tasks as fast as they can, many consumer
//! threads wait on the tickets; every task must run exactly once and every result must
//! come back. Checked three ways: each producer's mark counters (every element marked
//! once per round: zero lost, zero duplicated), a checksum over the inline results of
//! the batches that keep them, and the runtime's own count of completed tasks.

use crossbeam::channel;
use resident::{Runtime, Task, Ticket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What a consumer must check about one ticket.
enum Expect {
    /// Nothing beyond success.
    Done,
    /// The sum of the results at odd positions (the tagged noops; the marks between
    /// them return counts that depend on how rounds interleave).
    Checksum(u64),
}

/// `producers` threads each run `rounds` rounds over their own `region` mark counters;
/// a round is submitted as batches of `batch` tasks, alternating between three paths:
/// host batches of marks, a resident task list of the same marks (replayed), and host
/// batches of marks interleaved with tagged noops whose results are checksummed.
/// `consumers` threads wait on the tickets. Returns the number of tasks run.
pub fn many_producers_and_consumers(rt: &Runtime, producers: usize, consumers: usize, region: usize, rounds: usize, batch: usize) -> u64 {
    assert!(region.is_multiple_of(batch));
    let marks = rt.buffer::<u32>(producers * region).unwrap();
    let before = rt.metrics();
    let (tx, rx) = channel::bounded::<(Ticket, Expect)>(consumers * 8);
    let (checked, sum_want, sum_got) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..consumers {
            let (rx, checked, sum_got) = (rx.clone(), &checked, &sum_got);
            s.spawn(move || {
                for (t, expect) in rx {
                    match expect {
                        Expect::Done => t.wait().unwrap(),
                        Expect::Checksum(want) => {
                            let r = t.results().unwrap();
                            let got = r.iter().skip(1).step_by(2).fold(0u64, |a, &v| a.wrapping_add(v));
                            assert_eq!(got, want, "checksum of the ticket at {}", t.first_seq());
                            sum_got.fetch_add(got, Ordering::Relaxed);
                        }
                    }
                    checked.fetch_add(t.len() as u64, Ordering::Relaxed);
                }
            });
        }
        drop(rx);
        for p in 0..producers {
            let (tx, marks, sum_want) = (tx.clone(), &marks, &sum_want);
            s.spawn(move || {
                let base = p * region;
                let marks_of =
                    |from: usize| -> Vec<Task> { (from..from + batch).map(|i| Task::mark(marks.all(), (base + i) as u32)).collect() };
                let lists: Vec<_> = (0..region / batch).map(|b| rt.upload_tasks(&marks_of(b * batch)).unwrap()).collect();
                for round in 0..rounds {
                    for (b, list) in lists.iter().enumerate() {
                        let item = match (round + b) % 3 {
                            0 => (rt.submit(&marks_of(b * batch)).unwrap(), Expect::Done),
                            1 => (list.submit().unwrap(), Expect::Done),
                            _ => {
                                // Half marks, half noops tagged with (producer, round, index):
                                // the noops' results sum to a known checksum.
                                let mut tasks = Vec::with_capacity(batch);
                                let mut want = 0u64;
                                for (k, t) in marks_of(b * batch).into_iter().enumerate() {
                                    if k % 2 == 0 {
                                        tasks.push(t);
                                    } else {
                                        let tag = (p as u64) << 48 | (round as u64) << 24 | (b * batch + k) as u64;
                                        tasks.push(Task::noop(tag));
                                        want = want.wrapping_add(tag);
                                    }
                                }
                                sum_want.fetch_add(want, Ordering::Relaxed);
                                (rt.batch(&tasks).results().submit().unwrap(), Expect::Checksum(want))
                            }
                        };
                        tx.send(item).unwrap();
                    }
                }
                drop(lists);
            });
        }
        drop(tx);
    });
    let secs = start.elapsed().as_secs_f64();
    let after = rt.metrics();
    let total = (producers * region * rounds) as u64;
    // Queue slots, not tasks: a chunked list takes one for several of its tasks (the
    // tasks are counted by the consumers' tickets below, and by the marks).
    let (ran, taken) = (after.completed - before.completed, after.submitted - before.submitted);
    assert_eq!(ran, taken, "the runtime completed every queue slot it took, once");
    assert!(ran <= total, "more queue slots ({ran}) than tasks ({total})");
    assert_eq!(checked.load(Ordering::Relaxed), total, "consumers saw every task");
    assert_eq!(sum_got.load(Ordering::Relaxed), sum_want.load(Ordering::Relaxed), "checksum over all results");
    // Each element was marked in every round except in the rounds where its batch
    // carried noops and the element's position was odd.
    let got = marks.read().unwrap();
    for p in 0..producers {
        for i in 0..region {
            let b = i / batch;
            let skipped = (0..rounds).filter(|r| (r + b) % 3 == 2 && (i % batch) % 2 == 1).count();
            let want = (rounds - skipped) as u32;
            assert_eq!(got[p * region + i], want, "producer {p}, element {i}: marked {} times, want {want}", got[p * region + i]);
        }
    }
    eprintln!(
        "stress: {total} tasks from {producers} producers, {consumers} consumers, batches of {batch}: {secs:.2} s, {:.1} M tasks/s, 0 lost, 0 duplicated",
        total as f64 / secs / 1e6
    );
    total
}
