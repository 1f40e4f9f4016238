//! A kernel image's kernels on the CPU: its ordinary kernels compiled for the host (the
//! image's kernel table, with each one's parameter size) and `resident_one_task` over
//! its task set. Loading is a lookup: nothing is compiled at run time.

use crate::KernelImage;
use crate::image::__CpuKernelFn;

/// One kernel: its host body and the bytes of its one parameter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CpuKernel {
    pub body: __CpuKernelFn,
    pub param_bytes: usize,
}

#[derive(Debug)]
pub(crate) struct CpuModule {
    kernels: Vec<(&'static str, CpuKernel)>,
}

impl CpuModule {
    pub fn new(image: &KernelImage) -> Self {
        let mut kernels: Vec<_> =
            image.cpu_kernels().iter().map(|&(name, body, param_bytes)| (name, CpuKernel { body, param_bytes })).collect();
        let one_task = CpuKernel { body: image.set.cpu_one_task, param_bytes: size_of::<resident_shared::OneTaskParams>() };
        kernels.push(("resident_one_task", one_task));
        Self { kernels }
    }

    pub fn function(&self, name: &str) -> Option<CpuKernel> {
        self.kernels.iter().find(|(n, _)| *n == name).map(|&(_, k)| k)
    }
}
