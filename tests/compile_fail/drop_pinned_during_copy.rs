// A pinned buffer under a copy cannot be dropped (freed) inside the scope.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let src = gpu.pinned::<f32>(1024)?;
    let dev = gpu.alloc_zeroed::<f32>(1024)?;
    gpu.scope(|s| {
        let st = s.stream()?;
        st.copy_h2d(&src, &dev)?;
        drop(src);
        Ok(())
    })
}
