//! [`Device::scope`]: the one place where host memory may be lent to a stream.
//!
//! Modeled on `std::thread::scope`. The closure receives a [`Scope`]; streams made from
//! it ([`ScopedStream`]) may copy to and from pinned buffers borrowed for the lifetime
//! `'scope`, which lasts until `scope` returns, and `scope` synchronizes every one of
//! its streams before it returns, also when the closure fails or panics. Hence:
//!
//! - a pinned buffer under an upload stays immutably borrowed, and one under a
//!   download mutably borrowed, until the copies are complete: the host can neither
//!   mutate, read (under a download) nor drop it meanwhile (compile errors; see
//!   tests/compile_fail/);
//! - a pinned buffer made inside the closure cannot be lent at all: it would be dropped
//!   before the scope's synchronization (E0597);
//! - `mem::forget` of a `ScopedStream` changes nothing: the scope keeps its own handle
//!   to every stream it made or adopted and synchronizes it.
//!
//! A guard type returned by each copy (`Pending<'a>`, released by a wait) would be
//! finer-grained but unsound: `mem::forget(pending)` ends the borrow without the wait.
//! A scope cannot be forgotten halfway: the borrow ends only when `scope` returns, and
//! `scope` returns only after its synchronization.
//!
//! On the CPU device the same holds: a copy is a memcpy queued on the stream's thread,
//! and the synchronization waits until that thread is past every queued operation,
//! also after a failure. A scope is refused on a CPU stream's own thread (a host
//! callback), where waiting for streams could mean waiting for itself.
//!
//! Captures: pinned copies are refused while their stream captures (a graph could
//! replay them after the scope). On a GPU a synchronize of a capturing stream fails at
//! once without waiting, which would end the borrows under running copies; so the
//! scope's end waits for captures of its streams to end before it synchronizes them
//! (`Stream::synchronize_settled`), and a scope is refused inside a capture on the same
//! thread (whose end it would wait for).
//!
//! Streams made by [`Scope::stream`] first wait for the scope's origin (the stream
//! passed to [`Device::scope_after`], if any), and [`ScopedStream::fork`] makes a stream
//! that waits for the one it was forked from, like NVIDIA Warp's `ScopedStream`: work
//! enqueued before the new stream existed is visible to it by default. Device buffers
//! need no such care: their cross-stream order is tracked (see `tracker`).

use std::marker::PhantomData;
use std::ops::Deref;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::{Arc, Mutex};

use super::device::Device;
use super::raw::RawEvent;
use super::stream::Stream;
use crate::{Error, Result};

enum Member<'scope> {
    Owned(Arc<Stream>),
    Adopted(&'scope Stream),
}

impl Member<'_> {
    fn stream(&self) -> &Stream {
        match self {
            Member::Owned(s) => s,
            Member::Adopted(s) => s,
        }
    }
}

/// The streams of one [`Device::scope`] call. See the module doc.
pub struct Scope<'scope, 'env: 'scope> {
    origin: Option<RawEvent>,
    members: Mutex<Vec<Member<'scope>>>,
    // After the event and the streams: its context outlives them.
    gpu: Device,
    // Invariant in both lifetimes, as std's Scope: a ScopedStream<'scope> must not be
    // usable as one of a shorter scope, whose borrows would end before the sync.
    _scope: PhantomData<&'scope mut &'scope ()>,
    _env: PhantomData<&'env mut &'env ()>,
}

/// A stream of a [`Scope`]: a [`Stream`] (it dereferences to one) that can also copy
/// between device memory and pinned host buffers borrowed for `'scope`.
pub struct ScopedStream<'scope> {
    stream: StreamRef<'scope>,
    _scope: PhantomData<&'scope mut &'scope ()>,
}

enum StreamRef<'scope> {
    Owned(Arc<Stream>),
    Adopted(&'scope Stream),
}

impl Deref for ScopedStream<'_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        match &self.stream {
            StreamRef::Owned(s) => s,
            StreamRef::Adopted(s) => s,
        }
    }
}

impl<'scope> Scope<'scope, '_> {
    /// A new stream of the lowest priority, registered with this scope; it waits for
    /// the scope's origin.
    pub fn stream(&'scope self) -> Result<ScopedStream<'scope>> {
        self.stream_with_priority(self.gpu.priorities().low())
    }

    /// A new stream of the given priority (see [`Device::priorities`]).
    pub fn stream_with_priority(&'scope self, priority: i32) -> Result<ScopedStream<'scope>> {
        let s = Arc::new(self.gpu.stream_with_priority(priority)?);
        if let Some(origin) = &self.origin {
            s.raw.wait(origin)?;
        }
        self.members.lock().unwrap_or_else(|p| p.into_inner()).push(Member::Owned(s.clone()));
        Ok(ScopedStream { stream: StreamRef::Owned(s), _scope: PhantomData })
    }

    /// Lends an existing stream to the scope (say, one of a chosen priority made
    /// outside): it is synchronized with the others when the scope ends. It does not
    /// wait for the origin (it has its own order already).
    pub fn adopt(&'scope self, stream: &'scope Stream) -> Result<ScopedStream<'scope>> {
        self.gpu.same_device(&stream.gpu)?;
        self.members.lock().unwrap_or_else(|p| p.into_inner()).push(Member::Adopted(stream));
        Ok(ScopedStream { stream: StreamRef::Adopted(stream), _scope: PhantomData })
    }

    /// Synchronizes every stream; the first error wins.
    fn finish(&self) -> Result<()> {
        let members = self.members.lock().unwrap_or_else(|p| p.into_inner());
        let mut first = Ok(());
        for m in members.iter() {
            // An error here means the stream's work has failed, and the context with
            // it: no copy of it is still running (CUDA errors of async work are sticky
            // and stop the context; a CPU stream reports its failure only once its
            // thread is past everything queued). It is never a capture's refusal of the
            // synchronize (`synchronize_settled` waits for captures to end instead).
            // So returning, and ending the borrows, is sound.
            let r = m.stream().synchronize_settled();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

impl<'scope> ScopedStream<'scope> {
    /// A new stream of this scope that first waits for the work enqueued here so far
    /// (NVIDIA Warp's `ScopedStream` ordering).
    pub fn fork(&self, scope: &'scope Scope<'scope, '_>) -> Result<ScopedStream<'scope>> {
        let s = scope.stream_with_priority(self.priority())?;
        s.wait_stream(self)?;
        Ok(s)
    }
}

impl Device {
    /// Runs `f` with a [`Scope`] whose streams may borrow pinned host buffers for async
    /// copies; synchronizes all of them before returning (also if `f` fails or panics).
    ///
    /// ```
    /// # fn main() -> resident::Result<()> {
    /// use resident::stream::Device;
    /// let gpu = Device::cpu();                   // or Device::auto()?: a GPU if there is one
    /// let mut host = gpu.pinned::<f32>(1 << 20)?;
    /// host.fill(1.0);
    /// let dev = gpu.alloc_zeroed::<f32>(1 << 20)?;
    /// gpu.scope(|s| {
    ///     let st = s.stream()?;
    ///     st.copy_h2d(&host, &dev)?;          // host is borrowed until the scope ends
    ///     st.pipeline(dev.view(), dev.view(), 8)?;
    ///     Ok(())
    /// })?;
    /// host[0] = 2.0;                          // free again
    /// # Ok(()) }
    /// ```
    pub fn scope<'env, F, R>(&self, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        self.refuse_scope_on_stream_thread()?;
        self.run_scope(None, f)
    }

    /// A scope's end waits for its streams: on a CPU stream's thread that could be
    /// waiting for itself, so a CPU scope is refused there before it lends anything; and
    /// it waits for their captures to end, so a scope is refused inside a capture.
    fn refuse_scope_on_stream_thread(&self) -> Result<()> {
        if super::capture_gate::this_thread_captures() {
            return Err(Error::Config("Device::scope inside Stream::capture: the scope's end would wait for the capture to end".into()));
        }
        if self.is_cpu() { super::cpu::refuse_blocking("Device::scope") } else { Ok(()) }
    }

    /// [`Device::scope`], where every stream made by the scope first waits for the work
    /// enqueued on `origin` so far.
    pub fn scope_after<'env, F, R>(&self, origin: &Stream, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        self.same_device(&origin.gpu)?;
        self.refuse_scope_on_stream_thread()?;
        self.bind()?;
        let e = RawEvent::ordering(&origin.raw)?;
        e.record(&origin.raw)?;
        self.run_scope(Some(e), f)
    }

    fn run_scope<'env, F, R>(&self, origin: Option<RawEvent>, f: F) -> Result<R>
    where
        F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> Result<R>,
    {
        let scope = Scope { gpu: self.clone(), origin, members: Mutex::new(vec![]), _scope: PhantomData, _env: PhantomData };
        let out = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        // The borrows of 'scope end when this function returns: every stream that may
        // still use them is synchronized first, on every path.
        let sync = scope.finish();
        match out {
            Err(panic) => resume_unwind(panic),
            Ok(r) => {
                let r = r?;
                sync?;
                Ok(r)
            }
        }
    }
}
