//! A CUDA Graph captured from what one stream enqueues, instantiated, uploaded, replayed
//! and destroyed on drop: the launch-per-task baseline's graph and the examples' graphs
//! of their stage or step launches all come from here.

use cudarc::driver::sys::{self, CUgraph, CUgraphExec};

use super::driver::{Context, check};
use super::stream::Stream;
use crate::Result;

pub struct CapturedGraph {
    graph: CUgraph,
    exec: CUgraphExec,
    ctx: Context,
}

// SAFETY: graph handles are driver objects usable from any thread of their context,
// which is bound before each use.
unsafe impl Send for CapturedGraph {}
unsafe impl Sync for CapturedGraph {}

impl CapturedGraph {
    /// Captures what `launch` enqueues on `stream` (thread-local capture: other threads'
    /// work is not swept in), instantiates the graph, uploads it and waits, so that the
    /// first replay costs no more than the next.
    pub fn capture(stream: &Stream, launch: impl FnOnce() -> Result<()>) -> Result<Self> {
        stream.context().bind()?;
        let s = stream.raw();
        check(
            unsafe { sys::cuStreamBeginCapture_v2(s, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) },
            "cuStreamBeginCapture",
        )?;
        // End the capture whatever `launch` did, or the stream stays capturing.
        let launched = launch();
        let mut graph: CUgraph = std::ptr::null_mut();
        let ended = check(unsafe { sys::cuStreamEndCapture(s, &mut graph) }, "cuStreamEndCapture");
        if let Err(e) = launched.and(ended) {
            if !graph.is_null() {
                // SAFETY: the graph the capture returned, used by nothing.
                unsafe { sys::cuGraphDestroy(graph) };
            }
            return Err(e);
        }
        let mut exec: CUgraphExec = std::ptr::null_mut();
        if let Err(e) = check(unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }, "cuGraphInstantiate") {
            unsafe { sys::cuGraphDestroy(graph) };
            return Err(e);
        }
        let g = Self { graph, exec, ctx: stream.context().clone() };
        check(unsafe { sys::cuGraphUpload(exec, s) }, "cuGraphUpload")?;
        stream.synchronize()?;
        Ok(g)
    }

    /// Enqueues one replay of the graph on `stream` (a stream of its context).
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        self.ctx.bind()?;
        check(unsafe { sys::cuGraphLaunch(self.exec, stream.raw()) }, "cuGraphLaunch")
    }
}

impl Drop for CapturedGraph {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}
