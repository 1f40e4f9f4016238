// A pinned buffer under a download cannot be read until the scope has synchronized.
use resident::stream::Device;

fn main() -> resident::Result<()> {
    let gpu = Device::first()?;
    let mut dst = gpu.pinned::<f32>(1024)?;
    let dev = gpu.alloc_zeroed::<f32>(1024)?;
    gpu.scope(|s| {
        let st = s.stream()?;
        st.copy_d2h(&dev, &mut dst)?;
        println!("{}", dst[0]); // the copy engine may still be writing it
        Ok(())
    })
}
