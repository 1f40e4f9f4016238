// A pinned buffer made inside the scope would be freed before the scope synchronizes:
// it cannot be lent to a scoped stream.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let dev = gpu.alloc_zeroed::<f32>(1024)?;
    gpu.scope(|s| {
        let st = s.stream()?;
        let src = gpu.pinned::<f32>(1024)?;
        st.copy_h2d(&src, &dev)?;
        Ok(())
    })
}
