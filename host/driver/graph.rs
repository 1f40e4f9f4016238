//! A CUDA Graph captured from what one stream enqueues, instantiated, uploaded, replayed
//! and destroyed on drop: the launch-per-task baseline's graph and the examples' graphs
//! of their stage or step launches all come from here.

use cudarc::driver::sys::{self, CUgraph, CUgraphExec, CUstream};

use super::stream::Stream;
use crate::Result;
use crate::driver::context::{Context, check};

pub struct CapturedGraph {
    graph: CUgraph,
    exec: CUgraphExec,
    ctx: Context,
    /// The green context of the stream it was captured on, if any: its kernel nodes
    /// belong to that partition, which must outlive the graph.
    _green: Option<std::sync::Arc<super::green::GreenCtx>>,
}

// SAFETY: graph handles are driver objects usable from any thread of their context,
// which is bound before each use.
unsafe impl Send for CapturedGraph {}
unsafe impl Sync for CapturedGraph {}

impl CapturedGraph {
    /// Captures what `launch` enqueues on `stream` (thread-local capture: other threads'
    /// work is not swept in), instantiates the graph, uploads it and waits, so that the
    /// first replay costs no more than the next. The capture ends whatever `launch` does:
    /// returns an error or panics (then a guard ends it while unwinding, and destroys
    /// the graph it gives), so the stream never stays capturing.
    pub fn capture(stream: &Stream, launch: impl FnOnce() -> Result<()>) -> Result<Self> {
        stream.context().bind()?;
        let s = stream.raw();
        check(
            // SAFETY: a live stream of the context bound above.
            unsafe { sys::cuStreamBeginCapture_v2(s, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) },
            "cuStreamBeginCapture",
        )?;
        let capturing = Capturing { stream: s };
        let launched = launch();
        let ended = capturing.end();
        if let Err(e) = launched {
            if let Ok(graph) = ended {
                // SAFETY: the graph the capture returned, used by nothing.
                unsafe { sys::cuGraphDestroy(graph) };
            }
            return Err(e);
        }
        let graph = ended?;
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: `graph` is the live graph the capture returned; the driver writes `exec`.
        if let Err(e) = check(unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }, "cuGraphInstantiate") {
            // SAFETY: the graph the capture returned, used by nothing.
            unsafe { sys::cuGraphDestroy(graph) };
            return Err(e);
        }
        let g = Self { graph, exec, ctx: stream.context().clone(), _green: stream.green() };
        // SAFETY: the instantiated graph and a live stream of its context.
        check(unsafe { sys::cuGraphUpload(exec, s) }, "cuGraphUpload")?;
        stream.synchronize()?;
        Ok(g)
    }

    /// Enqueues one replay of the graph on `stream` (a stream of its context).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.ctx.bind()?;
        // SAFETY: the live executable graph and a live stream of its context (bound).
        check(unsafe { sys::cuGraphLaunch(self.exec, stream.raw()) }, "cuGraphLaunch")
    }
}

/// A capture in progress on a stream: [`Capturing::end`] ends it and gives its graph;
/// dropped without that (`launch` panicked), it ends the capture and destroys the graph.
struct Capturing {
    stream: CUstream,
}

impl Capturing {
    /// Ends the capture: the graph, or why there is none (the capture was invalidated,
    /// say by a call the driver refuses during capture).
    fn end(self) -> Result<CUgraph> {
        let s = self.stream;
        std::mem::forget(self);
        end_capture(s)
    }
}

impl Drop for Capturing {
    fn drop(&mut self) {
        if let Ok(graph) = end_capture(self.stream) {
            // SAFETY: the graph the capture returned, used by nothing.
            unsafe { sys::cuGraphDestroy(graph) };
        }
    }
}

/// `cuStreamEndCapture` on `stream` (on the thread that began it: the mode is
/// thread-local): the graph captured, non-null on success.
fn end_capture(stream: CUstream) -> Result<CUgraph> {
    let mut graph: CUgraph = std::ptr::null_mut();
    // SAFETY: a live stream that this thread is capturing; the driver writes `graph`.
    check(unsafe { sys::cuStreamEndCapture(stream, &mut graph) }, "cuStreamEndCapture")?;
    if graph.is_null() {
        return Err(crate::Error::Config("cuStreamEndCapture returned no graph".into()));
    }
    Ok(graph)
}

impl Drop for CapturedGraph {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: the graph and its executable, owned here and used by nothing else; a
        // replay still running keeps what it needs (the driver defers the release).
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}
