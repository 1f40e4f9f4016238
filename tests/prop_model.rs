//! Property: random sequences of public calls (create, close and drop
//! runtimes; create, read and drop buffers and counters; submit, submit_for_results,
//! try_submit, reservations, upload and submit task lists, drop lists; wait on tickets,
//! blocking, through their futures or for their results, or drop them) agree with a
//! model of what each call must answer, and every task the runtime accepted ran exactly
//! once while nothing it refused ran.
//!
//! Tasks name model objects by index, and on purpose sometimes objects the runtime they
//! go to must refuse: buffers and counters of the other runtime, dropped ones, a buffer
//! of another element type. Mark and tree tasks increment elements of `u32` buffers, and
//! tasks signal counters, so that the model knows exactly what every buffer element and
//! every counter must read: `Buffer::read` waits for every task submitted before it that
//! may touch the buffer, so a read is exact at any point of a sequence (also after the
//! buffer's runtime closed or was dropped); a counter's value is a snapshot, compared
//! once every task of its runtime has run (`Runtime::wait_idle`). A task list is re-checked at each submission, so one naming a
//! buffer or counter dropped since its upload is refused. A failure prints the minimal
//! op sequence and the log of the calls it made, as resolved against the model.
//!
//! Not driven: concurrent callers (the sequences run on one thread, so `WouldBlock` is
//! accepted but never seen), faults and hung tasks (tests/common/faults.rs), and the
//! unchecked path (tests/prop_checks.rs).

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestRunner};
use resident::{Buffer, Counter, Error, Rejection, Runtime, RuntimeConfig, Slice, Task, TaskList, Ticket};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Slots in each runtime's ring: a `Batch::try_submit` or reservation of more is `ExceedsQueue`.
const CAPACITY: usize = 256;

/// A drain here takes microseconds; the shutdown timeout only bounds a real hang. Not
/// 5 s: the machine this was written on once stalled every process for 5.6 s (a sleep
/// loop beside the test saw the gap), and a close caught in such a stall rightly
/// answers `Timeout`.
fn config() -> RuntimeConfig {
    RuntimeConfig { capacity: CAPACITY as u32, cpu_workers: 2, shutdown_timeout: Duration::from_secs(30), ..RuntimeConfig::cpu() }
}

/// A model object a task names: one of the target runtime's live ones (most tasks, so
/// that most batches are valid), or any object the case has made, whatever its runtime
/// and whether it still lives. The number is reduced modulo the candidates.
#[derive(Clone, Copy, Debug)]
enum Pick {
    Own(usize),
    Any(usize),
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    /// Its result is its tag.
    Noop(u64),
    /// Keeps a worker busy, so that the ring is sometimes full (`QueueFull`).
    Spin { micros: u64 },
    /// Increments element `at % len` of a buffer, through a one-element slice or the
    /// whole buffer with that index.
    Mark { buf: Pick, at: usize, whole: bool },
    /// A tree of `depth` levels below its root, fanout 2 (3 or 7 nodes, each a task,
    /// the children pushed on the device), over as many elements from `at`.
    Tree { buf: Pick, at: usize, depth: u32 },
}

#[derive(Clone, Copy, Debug)]
struct TaskSpec {
    kind: Kind,
    signal: Option<Pick>,
    /// Runs once the counter reaches `percent`% of the signals accepted before: signals
    /// of earlier batches, which run whatever this one does, so the wait always ends.
    wait: Option<(Pick, u32)>,
}

/// A batch: its tasks, then `padding` noops (a batch of more than the ring when larger
/// than `CAPACITY`).
#[derive(Clone, Debug)]
struct Batch {
    tasks: Vec<TaskSpec>,
    padding: usize,
}

/// How a reservation is filled and ended.
#[derive(Clone, Copy, Debug)]
struct Fill {
    /// Slots reserved beyond the batch (run as no-ops).
    spare: usize,
    /// `extend` with the whole batch (all or none), else `push` task by task.
    extend: bool,
    /// `commit`, else drop it (what was pushed runs all the same).
    commit: bool,
}

/// Runtimes, lists and tickets are picked among those the model holds, buffers and
/// counters to drop or read among those it holds, modulo their number.
#[derive(Clone, Debug)]
enum Op {
    NewRuntime,
    /// Dropping the `Runtime` value: a close whose outcome nobody sees.
    DropRuntime(usize),
    Close(usize),
    /// `Sharing::release`: the workers leave if the runtime is idle (elastic residency);
    /// the next submission starts them again.
    Release(usize),
    NewBuffer {
        rt: usize,
        len: usize,
        float: bool,
    },
    DropBuffer(usize),
    Read(usize),
    NewCounter(usize),
    DropCounter(usize),
    /// `results`: `Batch::results`, and waits on its ticket check the noops' tags.
    Submit {
        rt: usize,
        batch: Batch,
        results: bool,
    },
    TrySubmit {
        rt: usize,
        batch: Batch,
    },
    Reserve {
        rt: usize,
        batch: Batch,
        fill: Fill,
    },
    Upload {
        rt: usize,
        batch: Batch,
    },
    /// To the runtime that uploaded it, the only one it goes to.
    SubmitList {
        list: usize,
    },
    DropList(usize),
    Wait(usize),
    WaitAsync(usize),
    DropTicket(usize),
    /// Waits every held ticket, then compares every buffer and counter with the model.
    Check,
}

fn pick() -> impl Strategy<Value = Pick> {
    prop_oneof![4 => (0usize..8).prop_map(Pick::Own), 1 => (0usize..16).prop_map(Pick::Any)]
}

fn task() -> impl Strategy<Value = TaskSpec> {
    let kind = prop_oneof![
        2 => (0u64..1000).prop_map(Kind::Noop),
        1 => (50u64..400).prop_map(|micros| Kind::Spin { micros }),
        6 => (pick(), 0usize..64, any::<bool>()).prop_map(|(buf, at, whole)| Kind::Mark { buf, at, whole }),
        2 => (pick(), 0usize..64, 1u32..3).prop_map(|(buf, at, depth)| Kind::Tree { buf, at, depth }),
    ];
    (kind, proptest::option::weighted(0.3, pick()), proptest::option::weighted(0.15, (pick(), 0u32..=100)))
        .prop_map(|(kind, signal, wait)| TaskSpec { kind, signal, wait })
}

fn batch() -> impl Strategy<Value = Batch> {
    // 200..300 noops: around the ring's size, for `ExceedsQueue`, a full ring, and
    // batches `submit` feeds in as room frees.
    (vec(task(), 0..6), prop_oneof![6 => Just(0usize), 1 => 200usize..300]).prop_map(|(tasks, padding)| Batch { tasks, padding })
}

fn op() -> impl Strategy<Value = Op> {
    let rt = || 0usize..4;
    let ix = || 0usize..16;
    let fill = (prop_oneof![3 => Just(0usize), 1 => 1usize..4], any::<bool>(), proptest::bool::weighted(0.8))
        .prop_map(|(spare, extend, commit)| Fill { spare, extend, commit });
    prop_oneof![
        2 => Just(Op::NewRuntime),
        1 => rt().prop_map(Op::DropRuntime),
        1 => rt().prop_map(Op::Close),
        2 => rt().prop_map(Op::Release),
        3 => (rt(), 1usize..64, proptest::bool::weighted(0.15)).prop_map(|(rt, len, float)| Op::NewBuffer { rt, len, float }),
        2 => ix().prop_map(Op::DropBuffer),
        1 => ix().prop_map(Op::Read),
        2 => rt().prop_map(Op::NewCounter),
        2 => ix().prop_map(Op::DropCounter),
        5 => (rt(), batch(), proptest::bool::weighted(0.3)).prop_map(|(rt, batch, results)| Op::Submit { rt, batch, results }),
        3 => (rt(), batch()).prop_map(|(rt, batch)| Op::TrySubmit { rt, batch }),
        2 => (rt(), batch(), fill).prop_map(|(rt, batch, fill)| Op::Reserve { rt, batch, fill }),
        2 => (rt(), batch()).prop_map(|(rt, batch)| Op::Upload { rt, batch }),
        3 => ix().prop_map(|list| Op::SubmitList { list }),
        1 => ix().prop_map(Op::DropList),
        2 => ix().prop_map(Op::Wait),
        2 => ix().prop_map(Op::WaitAsync),
        1 => ix().prop_map(Op::DropTicket),
        1 => Just(Op::Check),
    ]
}

/// A case: a runtime first (so that the ops have one to act on), then up to 40 ops.
fn sequence() -> impl Strategy<Value = Vec<Op>> {
    vec(op(), 1..40).prop_map(|mut ops| {
        ops.insert(0, Op::NewRuntime);
        ops
    })
}

struct RtSlot {
    /// `None` once dropped.
    rt: Option<Runtime>,
    /// Closed or dropped: everything new is refused with `ShutDown`.
    closed: bool,
}

enum Held {
    U32(Buffer<u32>),
    F32(Buffer<f32>),
}

struct BufSlot {
    rt: usize,
    handle: resident::BufferHandle,
    len: usize,
    /// An `f32` buffer: every task of this file that names it is refused; it stays zero.
    float: bool,
    /// `None` once dropped.
    held: Option<Held>,
    /// How often each element must have been incremented.
    marks: Vec<u32>,
}

struct CounterSlot {
    rt: usize,
    id: resident::CounterId,
    /// `None` once dropped.
    held: Option<Counter>,
    /// Signals of accepted tasks: what `value()` must read once they ran.
    signals: u32,
}

/// What running tasks does, and what they name.
#[derive(Default, Clone)]
struct Effects {
    /// (buffer, element) per increment.
    marks: Vec<(usize, usize)>,
    /// A counter per signal.
    signals: Vec<usize>,
    /// Every buffer and counter named: what `TaskList::submit` re-checks.
    buffers: Vec<usize>,
    counters: Vec<usize>,
}

impl Effects {
    fn add(&mut self, o: &Effects) {
        self.marks.extend(&o.marks);
        self.signals.extend(&o.signals);
        self.buffers.extend(&o.buffers);
        self.counters.extend(&o.counters);
    }
}

/// A task resolved against the model for one runtime.
struct Resolved {
    task: Task,
    /// What the host's check must say of it there.
    refusal: Option<Rejection>,
    fx: Effects,
    /// Its inline result, where the model knows it (noops: the tag; a tree's root: its
    /// fanout).
    result: Option<u64>,
}

struct ListSlot {
    rt: usize,
    list: TaskList,
    effects: Effects,
}

struct TicketSlot {
    ticket: Ticket,
    /// `Batch::results`: each task's result where the model knows it.
    results: Option<Vec<Option<u64>>>,
    what: String,
}

/// The runtime's objects beside the model of what they must show, and the log of the
/// calls made (for a failure's message).
#[derive(Default)]
struct Model {
    rts: Vec<RtSlot>,
    bufs: Vec<BufSlot>,
    counters: Vec<CounterSlot>,
    lists: Vec<ListSlot>,
    tickets: Vec<TicketSlot>,
    log: Vec<String>,
    /// How often each outcome came up (for the coverage check).
    seen: BTreeMap<String, usize>,
}

/// What a call must answer, beside the runtime's state.
#[derive(Default)]
struct Expect {
    /// Checked before the runtime's state, so whatever it is: this error.
    early: Option<Error>,
    /// The refusal of the call's own checks on a running runtime.
    late: Option<Error>,
    /// `Batch::try_submit`: `QueueFull` and `WouldBlock` are answers too, with nothing run.
    may_retry: bool,
}

/// The first refusal of `tasks` as a batch's error.
fn first_refusal(tasks: &[Resolved]) -> Option<Error> {
    tasks.iter().enumerate().find_map(|(index, t)| t.refusal.clone().map(|reason| Error::InvalidTask { index, reason }))
}

/// An outcome's name for the coverage count: the error's variant (and a rejection's).
fn outcome<T>(got: &resident::Result<T>) -> String {
    let head = |s: String| s.split([' ', '(', '{']).next().unwrap_or_default().to_string();
    match got {
        Ok(_) => "Ok".into(),
        Err(Error::InvalidTask { reason, .. }) => format!("InvalidTask({})", head(format!("{reason:?}"))),
        Err(e) => head(format!("{e:?}")),
    }
}

impl Model {
    fn fail(&self, what: String) -> TestCaseError {
        TestCaseError::fail(format!("{what}\ncalls made:\n  {}", self.log.join("\n  ")))
    }

    fn note(&mut self, what: String) {
        *self.seen.entry(what).or_default() += 1;
    }

    /// The `i`-th held runtime (modulo), if any.
    fn runtime(&self, i: usize) -> Option<usize> {
        let held: Vec<usize> = (0..self.rts.len()).filter(|&r| self.rts[r].rt.is_some()).collect();
        (!held.is_empty()).then(|| held[i % held.len()])
    }

    fn rt(&self, r: usize) -> &Runtime {
        self.rts[r].rt.as_ref().expect("a held runtime")
    }

    fn buffer_live_in(&self, b: usize, r: usize) -> bool {
        let s = &self.bufs[b];
        s.rt == r && s.held.is_some() && !s.float
    }

    fn counter_live_in(&self, c: usize, r: usize) -> bool {
        let s = &self.counters[c];
        s.rt == r && s.held.is_some()
    }

    fn pick(p: Pick, own: &[usize], all: usize) -> Option<usize> {
        match p {
            Pick::Own(i) if !own.is_empty() => Some(own[i % own.len()]),
            Pick::Own(i) | Pick::Any(i) => (all > 0).then(|| i % all),
        }
    }

    fn pick_buffer(&self, r: usize, p: Pick, min_len: usize) -> Option<usize> {
        let own: Vec<usize> = (0..self.bufs.len()).filter(|&b| self.buffer_live_in(b, r) && self.bufs[b].len >= min_len).collect();
        Self::pick(p, &own, self.bufs.len()).filter(|&b| self.bufs[b].len >= min_len)
    }

    fn pick_counter(&self, r: usize, p: Pick) -> Option<usize> {
        let own: Vec<usize> = (0..self.counters.len()).filter(|&c| self.counter_live_in(c, r)).collect();
        Self::pick(p, &own, self.counters.len())
    }

    /// The `i`-th held buffer (modulo), if any.
    fn held_buffer(&self, i: usize) -> Option<usize> {
        let held: Vec<usize> = (0..self.bufs.len()).filter(|&b| self.bufs[b].held.is_some()).collect();
        (!held.is_empty()).then(|| held[i % held.len()])
    }

    /// Elements `offset..offset + len` of model buffer `b`: through the buffer while
    /// the model holds a `u32` one, else as anyone can forge it from the handle.
    fn slice(&self, b: usize, offset: usize, len: usize) -> Slice<u32> {
        match &self.bufs[b].held {
            Some(Held::U32(buf)) if offset == 0 && len == buf.len() => buf.all(),
            Some(Held::U32(buf)) => buf.slice(offset..offset + len),
            _ => Slice::new(self.bufs[b].handle, offset as u32, len as u32),
        }
    }

    /// Task `spec` for runtime `r`. The host checks the header's counters (wait, then
    /// signal) before the declared slice.
    fn resolve(&self, r: usize, spec: &TaskSpec) -> Resolved {
        let mut fx = Effects::default();
        let mut slice_of = None;
        let (mut task, result) = match spec.kind {
            Kind::Noop(tag) => (Task::noop(tag), Some(tag)),
            Kind::Spin { micros } => (Task::spin(micros * 1000), None),
            Kind::Mark { buf, at, whole } => match self.pick_buffer(r, buf, 1) {
                None => (Task::noop(at as u64), Some(at as u64)),
                Some(b) => {
                    let elem = at % self.bufs[b].len;
                    slice_of = Some(b);
                    fx.marks.push((b, elem));
                    let t = if whole {
                        Task::mark(self.slice(b, 0, self.bufs[b].len), elem as u32)
                    } else {
                        Task::mark(self.slice(b, elem, 1), 0)
                    };
                    // Its result is the element before it, which depends on the order
                    // other marks of the element ran in.
                    (t, None)
                }
            },
            Kind::Tree { buf, at, depth } => {
                let nodes = (1 << (depth + 1)) - 1;
                match self.pick_buffer(r, buf, nodes) {
                    None => (Task::noop(at as u64), Some(at as u64)),
                    Some(b) => {
                        let start = at % (self.bufs[b].len - nodes + 1);
                        slice_of = Some(b);
                        fx.marks.extend((start..start + nodes).map(|e| (b, e)));
                        (Task::tree(self.slice(b, start, nodes), 0, depth, 2), Some(2))
                    }
                }
            }
        };
        let mut refusal = None;
        if let Some((c, percent)) = spec.wait.and_then(|(p, percent)| Some((self.pick_counter(r, p)?, percent))) {
            task = task.after(self.counters[c].id, self.counters[c].signals * percent / 100);
            fx.counters.push(c);
            if !self.counter_live_in(c, r) {
                refusal = Some(Rejection::BadCounter(self.counters[c].id.index));
            }
        }
        if let Some(c) = spec.signal.and_then(|p| self.pick_counter(r, p)) {
            task = task.signals(self.counters[c].id);
            fx.signals.push(c);
            fx.counters.push(c);
            if !self.counter_live_in(c, r) && refusal.is_none() {
                refusal = Some(Rejection::BadCounter(self.counters[c].id.index));
            }
        }
        if let Some(b) = slice_of {
            fx.buffers.push(b);
            if !self.buffer_live_in(b, r) && refusal.is_none() {
                refusal = Some(Rejection::BadBuffer { arg: 0, handle: self.bufs[b].handle.0 });
            }
        }
        Resolved { task, refusal, fx, result }
    }

    /// The tasks of `batch` for runtime `r`, its padding last.
    fn build(&self, r: usize, batch: &Batch) -> Vec<Resolved> {
        let padding = (0..batch.padding as u64).map(|tag| Resolved {
            task: Task::noop(tag),
            refusal: None,
            fx: Effects::default(),
            result: Some(tag),
        });
        batch.tasks.iter().map(|spec| self.resolve(r, spec)).chain(padding).collect()
    }

    fn apply(&mut self, fx: &Effects) {
        for &(b, e) in &fx.marks {
            self.bufs[b].marks[e] += 1;
        }
        for &c in &fx.signals {
            self.counters[c].signals += 1;
        }
    }

    /// Judges a call on runtime `r` against `expect`: its value if it succeeded and
    /// must have, `None` if it was refused as it must be. A closed runtime answers
    /// `ShutDown` before any check of the batch (this property once found the answer
    /// depending on whether a rate-limited health poll ran in the call).
    fn judge<T>(&mut self, what: &str, r: usize, got: resident::Result<T>, expect: Expect) -> Result<Option<T>, TestCaseError> {
        let closed = self.rts[r].closed;
        self.log.push(format!("{what} -> {}", got.as_ref().map_or_else(|e| format!("Err({e:?})"), |_| "Ok".into())));
        let call = what.split(' ').next().unwrap_or_default();
        self.note(format!("{call} {}{}", outcome(&got), if closed { " (closed)" } else { "" }));
        let ok = match (&got, &expect.early) {
            (Err(e), Some(want)) => e == want,
            (Ok(_), Some(_)) => false,
            (Err(Error::ShutDown), None) if closed => true,
            (Err(e), None) if !closed && expect.late.as_ref() == Some(e) => true,
            (Err(Error::QueueFull | Error::WouldBlock), None) => expect.may_retry && !closed && expect.late.is_none(),
            (Ok(_), None) => !closed && expect.late.is_none(),
            (Err(_), None) => false,
        };
        if !ok {
            let want = match (&expect.early, &expect.late, closed) {
                (Some(e), _, _) => format!("{e:?}"),
                (None, None, true) => "ShutDown".into(),
                (None, Some(_), true) => "ShutDown".into(),
                (None, Some(e), false) => format!("{e:?}"),
                (None, None, false) => "Ok".into(),
            };
            let got = got.map(|_| ());
            return Err(self.fail(format!("{what}: got {got:?}, the model says {want}")));
        }
        Ok(got.ok())
    }

    fn keep(&mut self, ticket: Ticket, results: Option<Vec<Option<u64>>>, what: String) {
        self.tickets.push(TicketSlot { ticket, results, what });
    }

    fn run(&mut self, op: &Op) -> Result<(), TestCaseError> {
        match op {
            Op::NewRuntime => {
                if self.rts.iter().filter(|s| s.rt.is_some()).count() >= 2 {
                    return Ok(());
                }
                let rt = Runtime::with_config(config()).map_err(|e| self.fail(format!("a new runtime: {e:?}")))?;
                self.log.push(format!("rt{} = Runtime::with_config", self.rts.len()));
                self.rts.push(RtSlot { rt: Some(rt), closed: false });
            }
            &Op::DropRuntime(i) => {
                let Some(r) = self.runtime(i) else { return Ok(()) };
                self.log.push(format!("drop rt{r}"));
                drop(self.rts[r].rt.take());
                self.rts[r].closed = true;
            }
            &Op::Close(i) => {
                let Some(r) = self.runtime(i) else { return Ok(()) };
                // A second close returns the drain's outcome again.
                let got = self.rt(r).close();
                self.log.push(format!("rt{r}.close() -> {got:?}"));
                if got != Ok(()) {
                    return Err(self.fail(format!("rt{r}.close(): {got:?}")));
                }
                self.rts[r].closed = true;
            }
            &Op::Release(i) => {
                let Some(r) = self.runtime(i) else { return Ok(()) };
                // Exits or not (idleness is timing); refused once closed.
                let got = self.rt(r).sharing().release();
                self.log.push(format!("rt{r}.release() -> {got:?}"));
                let ok = if self.rts[r].closed { got == Err(Error::ShutDown) } else { got.is_ok() };
                if !ok {
                    return Err(self.fail(format!("rt{r}.release(): {got:?}")));
                }
            }
            &Op::NewBuffer { rt, len, float } => {
                let Some(r) = self.runtime(rt) else { return Ok(()) };
                let what = format!("buffer b{} of rt{r}, {len} x {}", self.bufs.len(), if float { "f32" } else { "u32" });
                let early = self.rts[r].closed.then_some(Error::ShutDown);
                let got = if float { self.rt(r).buffer::<f32>(len).map(Held::F32) } else { self.rt(r).buffer::<u32>(len).map(Held::U32) };
                if let Some(held) = self.judge(&what, r, got, Expect { early, ..Expect::default() })? {
                    let handle = match &held {
                        Held::U32(b) => b.handle(),
                        Held::F32(b) => b.handle(),
                    };
                    self.bufs.push(BufSlot { rt: r, handle, len, float, held: Some(held), marks: vec![0; len] });
                }
            }
            &Op::DropBuffer(i) => {
                if let Some(b) = self.held_buffer(i) {
                    self.log.push(format!("drop b{b}"));
                    drop(self.bufs[b].held.take());
                }
            }
            &Op::Read(i) => {
                if let Some(b) = self.held_buffer(i) {
                    self.read(b)?;
                }
            }
            &Op::NewCounter(rt) => {
                let Some(r) = self.runtime(rt) else { return Ok(()) };
                let what = format!("counter c{} of rt{r}", self.counters.len());
                let early = self.rts[r].closed.then_some(Error::ShutDown);
                let got = self.rt(r).counter();
                if let Some(c) = self.judge(&what, r, got, Expect { early, ..Expect::default() })? {
                    self.log.push(format!("  id {:?}", c.id()));
                    self.counters.push(CounterSlot { rt: r, id: c.id(), held: Some(c), signals: 0 });
                }
            }
            &Op::DropCounter(i) => {
                let held: Vec<usize> = (0..self.counters.len()).filter(|&c| self.counters[c].held.is_some()).collect();
                if !held.is_empty() {
                    let c = held[i % held.len()];
                    self.log.push(format!("drop c{c}"));
                    drop(self.counters[c].held.take());
                }
            }
            &Op::Submit { rt, ref batch, results } => {
                let Some(r) = self.runtime(rt) else { return Ok(()) };
                let tasks = self.build(r, batch);
                let raw: Vec<Task> = tasks.iter().map(|t| t.task).collect();
                let call = if results { "submit_for_results" } else { "submit" };
                let what = format!("{call} rt{r} {} tasks {:?}", raw.len(), &raw[..batch.tasks.len()]);
                let got = if results { self.rt(r).batch(&raw).results().submit() } else { self.rt(r).submit(&raw) };
                let expect = Expect { late: first_refusal(&tasks), ..Expect::default() };
                if let Some(ticket) = self.judge(&what, r, got, expect)? {
                    tasks.iter().for_each(|t| self.apply(&t.fx));
                    self.keep(ticket, results.then(|| tasks.iter().map(|t| t.result).collect()), what);
                }
            }
            Op::TrySubmit { rt, batch } => {
                let Some(r) = self.runtime(*rt) else { return Ok(()) };
                let tasks = self.build(r, batch);
                let raw: Vec<Task> = tasks.iter().map(|t| t.task).collect();
                let what = format!("try_submit rt{r} {} tasks {:?}", raw.len(), &raw[..batch.tasks.len()]);
                let got = self.rt(r).batch(&raw).try_submit();
                // A batch larger than the ring can never fit, whatever it holds.
                let late = match raw.len() > CAPACITY {
                    true => Some(Error::ExceedsQueue { len: raw.len(), capacity: CAPACITY }),
                    false => first_refusal(&tasks),
                };
                if let Some(ticket) = self.judge(&what, r, got, Expect { late, may_retry: true, ..Expect::default() })? {
                    tasks.iter().for_each(|t| self.apply(&t.fx));
                    self.keep(ticket, None, what);
                }
            }
            &Op::Reserve { rt, ref batch, fill } => {
                let Some(r) = self.runtime(rt) else { return Ok(()) };
                self.reserve(r, batch, fill)?;
            }
            Op::Upload { rt, batch } => {
                let Some(r) = self.runtime(*rt) else { return Ok(()) };
                let tasks = self.build(r, batch);
                let raw: Vec<Task> = tasks.iter().map(|t| t.task).collect();
                let what = format!("upload_tasks l{} rt{r} {} tasks {:?}", self.lists.len(), raw.len(), &raw[..batch.tasks.len()]);
                let early = self.rts[r].closed.then_some(Error::ShutDown);
                let got = self.rt(r).upload_tasks(&raw);
                if let Some(list) = self.judge(&what, r, got, Expect { early, late: first_refusal(&tasks), ..Expect::default() })? {
                    let mut effects = Effects::default();
                    tasks.iter().for_each(|t| effects.add(&t.fx));
                    self.lists.push(ListSlot { rt: r, list, effects });
                }
            }
            &Op::SubmitList { list } => {
                if self.lists.is_empty() {
                    return Ok(());
                }
                let l = list % self.lists.len();
                // Its own runtime, closed or dropped (then `ShutDown`, as the model's
                // `closed` says).
                let r = self.lists[l].rt;
                let early = None;
                // Every buffer and counter it names is re-checked: the first dropped
                // buffer by handle, else the first dropped counter by id (index 0: a list
                // is refused whole).
                let fx = self.lists[l].effects.clone();
                let dead_buffer = fx.buffers.iter().filter(|&&b| self.bufs[b].held.is_none()).map(|&b| self.bufs[b].handle.0).min();
                let dead_counter =
                    fx.counters.iter().filter(|&&c| self.counters[c].held.is_none()).map(|&c| self.counters[c].id.index).min();
                let reason = match (dead_buffer, dead_counter) {
                    (Some(handle), _) => Some(Rejection::BadBuffer { arg: 0, handle }),
                    (None, Some(id)) => Some(Rejection::BadCounter(id)),
                    (None, None) => None,
                };
                let late = reason.map(|reason| Error::InvalidTask { index: 0, reason });
                let what = format!("submit_list l{l} (of rt{r}, {} tasks)", self.lists[l].list.len());
                let got = self.lists[l].list.submit();
                if let Some(ticket) = self.judge(&what, r, got, Expect { early, late, ..Expect::default() })? {
                    self.apply(&fx);
                    self.keep(ticket, None, what);
                }
            }
            &Op::DropList(i) => {
                if !self.lists.is_empty() {
                    let l = i % self.lists.len();
                    self.log.push(format!("drop l{l} (of rt{})", self.lists[l].rt));
                    // Later lists move down one: the log names them by their new index.
                    self.lists.remove(l);
                }
            }
            &Op::Wait(i) | &Op::WaitAsync(i) => {
                if !self.tickets.is_empty() {
                    let t = self.tickets.remove(i % self.tickets.len());
                    self.wait(t, matches!(op, Op::WaitAsync(_)))?;
                }
            }
            &Op::DropTicket(i) => {
                if !self.tickets.is_empty() {
                    let t = self.tickets.remove(i % self.tickets.len());
                    self.log.push(format!("drop the ticket of [{}]", t.what));
                }
            }
            Op::Check => self.check()?,
        }
        Ok(())
    }

    /// A reservation on runtime `r` for `batch` and `fill.spare` more slots, filled
    /// with `push` (each task on its own) or `extend` (all or none). While it is open,
    /// this thread's other calls on `r` are refused (`ReservationOpen`); what was
    /// written runs whether it is committed or dropped.
    fn reserve(&mut self, r: usize, batch: &Batch, fill: Fill) -> Result<(), TestCaseError> {
        // The reservation borrows the runtime while the model changes beside it.
        let rt = self.rts[r].rt.take().expect("a held runtime");
        let out = self.fill(r, &rt, batch, fill);
        self.rts[r].rt = Some(rt);
        out
    }

    fn fill(&mut self, r: usize, rt: &Runtime, batch: &Batch, fill: Fill) -> Result<(), TestCaseError> {
        let tasks = self.build(r, batch);
        let len = tasks.len() + fill.spare;
        let late = (len > CAPACITY).then_some(Error::ExceedsQueue { len, capacity: CAPACITY });
        let got = rt.reserve(len);
        let what = format!("reserve rt{r} {len}");
        let Some(mut res) = self.judge(&what, r, got, Expect { late, ..Expect::default() })? else { return Ok(()) };
        let mut written = Effects::default();
        if fill.extend {
            let raw: Vec<Task> = tasks.iter().map(|t| t.task).collect();
            let got = res.extend(&raw);
            let what = format!("extend {} tasks {:?}", raw.len(), &raw[..batch.tasks.len()]);
            if self.judge(&what, r, got, Expect { late: first_refusal(&tasks), ..Expect::default() })?.is_some() {
                tasks.iter().for_each(|t| written.add(&t.fx));
            }
        } else {
            let mut slot = 0;
            for t in &tasks {
                let late = t.refusal.clone().map(|reason| Error::InvalidTask { index: slot, reason });
                let got = res.push(t.task);
                // A refused push writes nothing: its slot is the next push's.
                if self.judge(&format!("push {:?}", t.task), r, got, Expect { late, ..Expect::default() })?.is_some() {
                    written.add(&t.fx);
                    slot += 1;
                }
            }
        }
        if res.remaining() == 0 {
            let got = res.push(Task::noop(0));
            self.judge("push past the end", r, got, Expect { early: Some(Error::ReservationFull(len)), ..Expect::default() })?;
        }
        let got = rt.submit(&[]);
        self.judge("submit-while-reserved", r, got, Expect { early: Some(Error::ReservationOpen), ..Expect::default() })?;
        if let Some(b) = (0..self.bufs.len()).find(|&b| self.bufs[b].rt == r && self.bufs[b].held.is_some()) {
            let got = match &self.bufs[b].held {
                Some(Held::U32(buf)) => buf.read().map(|_| ()),
                Some(Held::F32(buf)) => buf.read().map(|_| ()),
                None => unreachable!("held"),
            };
            self.judge("read-while-reserved", r, got, Expect { early: Some(Error::ReservationOpen), ..Expect::default() })?;
        }
        self.apply(&written);
        if fill.commit {
            let got = res.commit();
            if let Some(ticket) = self.judge("commit", r, got, Expect::default())? {
                self.keep(ticket, None, what);
            }
        } else {
            self.log.push("drop the reservation".into());
            drop(res);
        }
        Ok(())
    }

    /// Waits on ticket `t` (an accepted batch: it must succeed), and checks the
    /// results the model knows of a `Batch::results` batch.
    fn wait(&mut self, t: TicketSlot, is_async: bool) -> Result<(), TestCaseError> {
        let got = match (&t.results, is_async) {
            (_, true) => futures::executor::block_on(t.ticket.wait_async()).map(|()| None),
            (Some(_), false) => t.ticket.results().map(Some),
            (None, false) => {
                t.ticket.results().map(Some).or_else(|e| if e == Error::NoResults { t.ticket.wait().map(|()| None) } else { Err(e) })
            }
        };
        let call = if is_async {
            "wait_async"
        } else if t.results.is_some() {
            "results"
        } else {
            "wait"
        };
        self.log.push(format!("{call} t[{}] -> {}", t.what, got.as_ref().map_or_else(|e| format!("Err({e:?})"), |_| "Ok".into())));
        self.note(format!("{call} {}", outcome(&got)));
        match (got, &t.results) {
            (Err(e), _) => Err(self.fail(format!("{call} on the ticket of an accepted batch: {e:?} ({})", t.what))),
            (Ok(Some(got)), Some(want)) => {
                let wrong = got.len() != want.len() || got.iter().zip(want).any(|(g, w)| w.is_some_and(|w| w != *g));
                if wrong { Err(self.fail(format!("results {got:?}, the model says {want:?} ({})", t.what))) } else { Ok(()) }
            }
            (Ok(Some(got)), None) => Err(self.fail(format!("results {got:?} of a ticket without results ({})", t.what))),
            (Ok(None), _) => Ok(()),
        }
    }

    /// Buffer `b` reads what the model says.
    fn read(&mut self, b: usize) -> Result<(), TestCaseError> {
        let s = &self.bufs[b];
        let got = match &s.held {
            None => return Ok(()),
            Some(Held::U32(buf)) => buf.read(),
            // Zero as f32 and as u32 have the same bits.
            Some(Held::F32(buf)) => buf.read().map(|v| v.iter().map(|x| x.to_bits()).collect()),
        };
        self.log.push(format!("read b{b} (rt{}) -> {got:?}", s.rt));
        if got.as_ref() != Ok(&s.marks) {
            return Err(self.fail(format!("b{b} of rt{}: read {got:?}, the model says {:?}", s.rt, s.marks)));
        }
        Ok(())
    }

    /// Waits every held ticket, then compares every held buffer and counter.
    fn check(&mut self) -> Result<(), TestCaseError> {
        self.log.push("check".into());
        for t in &self.tickets {
            let got = t.ticket.wait();
            if got != Ok(()) {
                return Err(self.fail(format!("the ticket of an accepted batch: {got:?} ({})", t.what)));
            }
        }
        for b in 0..self.bufs.len() {
            self.read(b)?;
        }
        // A counter's value is a snapshot: first every task of a running runtime must
        // have run, those of dropped tickets and reservations too: `wait_idle` (closed
        // runtimes drained already).
        for r in 0..self.rts.len() {
            if let (Some(rt), false) = (&self.rts[r].rt, self.rts[r].closed) {
                let settled = rt.wait_idle();
                if settled != Ok(()) {
                    return Err(self.fail(format!("rt{r}.wait_idle(): {settled:?}")));
                }
            }
        }
        for (c, s) in self.counters.iter().enumerate() {
            if let Some(counter) = &s.held {
                let got = counter.value();
                if got != Ok(s.signals) {
                    return Err(self.fail(format!("c{c} of rt{}: value {got:?}, the model says {}", s.rt, s.signals)));
                }
            }
        }
        Ok(())
    }

    /// A case: the ops, a final check, then every held runtime closes cleanly.
    fn case(&mut self, ops: &[Op]) -> Result<(), TestCaseError> {
        for op in ops {
            self.run(op)?;
        }
        self.check()?;
        for r in 0..self.rts.len() {
            if let Some(rt) = &self.rts[r].rt {
                let got = rt.close();
                if got != Ok(()) {
                    return Err(self.fail(format!("rt{r}.close() at the end: {got:?}")));
                }
            }
        }
        Ok(())
    }
}

/// Cases per run: a case takes about 3 ms in `--release`.
const CASES: u32 = 256;

/// Outcomes every run must have seen, so that the model cannot drift into one where
/// every call is refused (or none is) and pass vacuously. Each comes up 15 to a few
/// hundred times in `CASES` cases.
const MUST_SEE: &[&str] = &[
    "submit Ok",
    "submit InvalidTask(BadBuffer)",
    "submit InvalidTask(BadCounter)",
    "submit_for_results Ok",
    "results Ok",
    "try_submit Ok",
    "try_submit ExceedsQueue",
    "reserve Ok",
    "push Ok",
    "push InvalidTask(BadBuffer)",
    "push ReservationFull",
    "extend Ok",
    "submit-while-reserved ReservationOpen",
    "upload_tasks Ok",
    "submit_list Ok",
    "submit ShutDown (closed)",
    "buffer ShutDown (closed)",
    "wait Ok",
    "wait_async Ok",
];

#[test]
fn random_call_sequences_match_the_model() {
    let start = Instant::now();
    let mut runner = TestRunner::new(Config {
        cases: CASES,
        source_file: Some(file!()),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("proptest-regressions"))),
        ..Config::default()
    });
    let seen = RefCell::new(BTreeMap::<String, usize>::new());
    let result = runner.run(&sequence(), |ops| {
        let mut model = Model::default();
        let out = model.case(&ops);
        for (k, v) in std::mem::take(&mut model.seen) {
            *seen.borrow_mut().entry(k).or_default() += v;
        }
        out
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let seen = seen.into_inner();
    eprintln!("{CASES} cases in {:?}; outcomes: {seen:#?}", start.elapsed());
    let missing: Vec<&&str> = MUST_SEE.iter().filter(|k| !seen.contains_key(**k)).collect();
    assert!(missing.is_empty(), "never seen in {CASES} cases: {missing:?}");
}
