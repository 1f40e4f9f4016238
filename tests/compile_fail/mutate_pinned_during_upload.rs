// A pinned buffer under an upload cannot be written until the scope has synchronized.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let mut src = gpu.pinned::<f32>(1024)?;
    let dev = gpu.alloc_zeroed::<f32>(1024)?;
    gpu.scope(|s| {
        let st = s.stream()?;
        st.copy_h2d(&src, &dev)?;
        src[0] = 1.0; // the copy engine may be reading it
        Ok(())
    })
}
