// Async copies take pinned memory only: a Vec is not a pinned view.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let src = vec![0f32; 1024];
    let dev = gpu.alloc_zeroed::<f32>(1024)?;
    gpu.scope(|s| {
        let st = s.stream()?;
        st.copy_h2d(&src, &dev)?;
        Ok(())
    })
}
