//! A screenshot's PNG, from the sandbox (hostile: decoded under a memory limit), cut to a
//! region and scaled down to a width, on the host. Passed on as it came when neither is asked.

use crate::error::Error;
use sandboxd_api::Region;
use std::io::Cursor;

/// The most memory one decoded screenshot may take (8K RGBA is 133 MB; this allows 4K twice).
const MAX_DECODED_BYTES: usize = 96 << 20;

/// A screenshot ready to answer with.
#[derive(Debug)]
pub struct Shaped {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// The part of the screen it shows, in screen pixels.
    pub source: Region,
}

/// `png` (the whole screen) cut to `region` and scaled to at most `max_width` wide.
pub fn shape(
    png: Vec<u8>,
    region: Option<Region>,
    max_width: Option<u32>,
) -> Result<Shaped, Error> {
    let (screen_width, screen_height) = size(&png)?;
    let whole = Region {
        x: 0,
        y: 0,
        width: screen_width,
        height: screen_height,
    };
    let source = match region {
        Some(r) if r.x >= screen_width || r.y >= screen_height => {
            return Err(Error::bad_request(
                "invalid_request",
                format!(
                    "`region` starts at {},{}, outside the {screen_width}x{screen_height} screen",
                    r.x, r.y
                ),
            ))
        }
        Some(r) => Region {
            x: r.x,
            y: r.y,
            width: r.width.min(screen_width - r.x),
            height: r.height.min(screen_height - r.y),
        },
        None => whole,
    };
    let width = max_width.map_or(source.width, |w| w.min(source.width));
    let height = scaled(source.height, width, source.width);
    if source == whole && width == source.width {
        return Ok(Shaped {
            png,
            width,
            height,
            source,
        });
    }
    let pixels = decode_rgb(&png)?;
    let cut = crop(&pixels, screen_width, source);
    let resized = resize(&cut, source.width, source.height, width, height);
    Ok(Shaped {
        png: encode_rgb(&resized, width, height)?,
        width,
        height,
        source,
    })
}

/// `length` scaled by `to / from`, at least 1.
fn scaled(length: u32, to: u32, from: u32) -> u32 {
    let scaled = (u64::from(length) * u64::from(to) + u64::from(from) / 2) / u64::from(from.max(1));
    u32::try_from(scaled.max(1)).unwrap_or(u32::MAX)
}

fn not_png(e: impl std::fmt::Display) -> Error {
    Error::Agent(format!(
        "the screenshot is not a PNG the service can read: {e}"
    ))
}

fn decoder(png: &[u8]) -> png::Decoder<Cursor<&[u8]>> {
    png::Decoder::new_with_limits(
        Cursor::new(png),
        png::Limits {
            bytes: MAX_DECODED_BYTES,
        },
    )
}

/// The image's width and height, from its header.
pub fn size(png: &[u8]) -> Result<(u32, u32), Error> {
    let reader = decoder(png).read_info().map_err(not_png)?;
    let info = reader.info();
    Ok((info.width, info.height))
}

/// The pixels as RGB, 8 bits each.
fn decode_rgb(png: &[u8]) -> Result<Vec<u8>, Error> {
    let mut decoder = decoder(png);
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(not_png)?;
    let size = reader
        .output_buffer_size()
        .filter(|s| *s <= MAX_DECODED_BYTES)
        .ok_or_else(|| not_png("it is too large"))?;
    let mut buffer = vec![0; size];
    let frame = reader.next_frame(&mut buffer).map_err(not_png)?;
    let channels = match frame.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        png::ColorType::Indexed => return Err(not_png("palette left unexpanded")),
    };
    let (width, height) = (frame.width as usize, frame.height as usize);
    let mut rgb = Vec::with_capacity(width * height * 3);
    for row in buffer.chunks(frame.line_size).take(height) {
        for pixel in row.chunks(channels).take(width) {
            match channels {
                1 | 2 => rgb.extend_from_slice(&[pixel[0]; 3]),
                _ => rgb.extend_from_slice(&pixel[..3]),
            }
        }
    }
    Ok(rgb)
}

/// The `region` of an RGB image `width` pixels wide.
fn crop(rgb: &[u8], width: u32, region: Region) -> Vec<u8> {
    let stride = width as usize * 3;
    let mut out = Vec::with_capacity(region.width as usize * region.height as usize * 3);
    for row in rgb
        .chunks(stride)
        .skip(region.y as usize)
        .take(region.height as usize)
    {
        let start = region.x as usize * 3;
        out.extend_from_slice(&row[start..start + region.width as usize * 3]);
    }
    out
}

/// An RGB image scaled to `to_width` x `to_height`, each pixel the mean of the pixels it
/// covers (text stays legible when scaled down, unlike picking one pixel of each block).
fn resize(rgb: &[u8], width: u32, height: u32, to_width: u32, to_height: u32) -> Vec<u8> {
    // Screens are at most 32767 pixels across: the products fit.
    let span = |i: u32, to: u32, from: u32| {
        let (i, to, from) = (i as usize, to as usize, from as usize);
        let start = i * from / to;
        let end = ((i + 1) * from / to).max(start + 1);
        start..end.min(from)
    };
    let stride = width as usize * 3;
    let mut out = Vec::with_capacity(to_width as usize * to_height as usize * 3);
    for dy in 0..to_height {
        let rows = span(dy, to_height, height);
        for dx in 0..to_width {
            let columns = span(dx, to_width, width);
            let mut sum = [0u64; 3];
            let mut count = 0u64;
            for y in rows.clone() {
                let row = &rgb[y * stride..(y + 1) * stride];
                for x in columns.clone() {
                    for (channel, total) in sum.iter_mut().enumerate() {
                        *total += u64::from(row[x * 3 + channel]);
                    }
                    count += 1;
                }
            }
            out.extend(
                sum.map(|total| {
                    u8::try_from((total + count / 2) / count.max(1)).unwrap_or(u8::MAX)
                }),
            );
        }
    }
    out
}

fn encode_rgb(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, Error> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let encoded = encoder
        .write_header()
        .and_then(|mut writer| writer.write_image_data(rgb).and_then(|()| writer.finish()));
    encoded.map_err(|e| Error::Agent(format!("the screenshot could not be encoded: {e}")))?;
    Ok(png)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `width` x `height` image whose left half is black and right half white.
    fn halves(width: u32, height: u32) -> Vec<u8> {
        let mut rgb = Vec::new();
        for _ in 0..height {
            for x in 0..width {
                rgb.extend([if x < width / 2 { 0 } else { 255 }; 3]);
            }
        }
        encode_rgb(&rgb, width, height).unwrap()
    }

    #[test]
    fn an_unchanged_screenshot_is_passed_on_as_it_came() {
        let png = halves(40, 30);
        let shaped = shape(png.clone(), None, Some(1280)).unwrap();
        assert_eq!(shaped.png, png);
        assert_eq!((shaped.width, shaped.height), (40, 30));
    }

    #[test]
    fn scaling_keeps_proportions_and_content() {
        let shaped = shape(halves(40, 30), None, Some(20)).unwrap();
        assert_eq!((shaped.width, shaped.height), (20, 15));
        assert_eq!(size(&shaped.png).unwrap(), (20, 15));
        let rgb = decode_rgb(&shaped.png).unwrap();
        assert_eq!(rgb[0], 0, "left is black");
        assert_eq!(rgb[19 * 3], 255, "right is white");
        assert_eq!(shaped.source.width, 40);
    }

    #[test]
    fn a_region_is_cut_and_clamped_to_the_screen() {
        let region = Region {
            x: 30,
            y: 10,
            width: 100,
            height: 5,
        };
        let shaped = shape(halves(40, 30), Some(region), None).unwrap();
        assert_eq!((shaped.width, shaped.height), (10, 5));
        assert_eq!(shaped.source.width, 10, "clamped to the screen's edge");
        assert!(decode_rgb(&shaped.png).unwrap().iter().all(|v| *v == 255));
        let outside = Region { x: 40, ..region };
        assert!(shape(halves(40, 30), Some(outside), None).is_err());
    }

    #[test]
    fn what_is_not_a_png_is_an_error() {
        assert!(shape(b"not a png".to_vec(), None, None).is_err());
    }
}
