//! Writing a figure: the bundled font, one [`Figure`] drawn on the PNG and the SVG backend
//! side by side, and the text helpers every figure uses (title, subtitle, fitted labels,
//! "no data").

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::style::{AXIS_DESC_SIZE, FONT, SUBTITLE_SIZE, TITLE_SIZE};
use crate::{HEIGHT, WIDTH};

/// Why a chart could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The bundled font could not be loaded (a build problem, not a data problem).
    #[error("cannot load the bundled chart font")]
    Font,
    /// Plotters failed while drawing or encoding the file.
    #[error("drawing {}: {message}", path.display())]
    Draw {
        /// The file being drawn.
        path: PathBuf,
        /// Plotters' error, as text.
        message: String,
    },
    /// Creating the directory or writing the file failed.
    #[error("writing {}: {source}", path.display())]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

pub(crate) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Something that can draw itself on any backend.
pub(crate) trait Figure {
    /// `vector` is true for the SVG backend, false for the bitmap one.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        vector: bool,
    ) -> DrawResult<DB>;

    /// The canvas size in pixels.
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }
}

/// Registers the bundled font once; every chart function calls this first.
fn ensure_font() -> Result<(), PlotError> {
    static LOADED: OnceLock<bool> = OnceLock::new();
    let ok = *LOADED.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, epaint_default_fonts::UBUNTU_LIGHT)
            .is_ok()
    });
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

/// `stem` with `.ext` appended (not replacing an existing extension such as `run.v2`).
fn with_suffix(stem: &Path, ext: &str) -> PathBuf {
    let mut s = OsString::from(stem.as_os_str());
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

pub(crate) fn render(stem: &Path, fig: &impl Figure) -> Result<[PathBuf; 2], PlotError> {
    ensure_font()?;
    let png = with_suffix(stem, "png");
    let svg = with_suffix(stem, "svg");
    if let Some(dir) = png.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let draw_err = |path: &Path| {
        let path = path.to_path_buf();
        move |e: &dyn std::fmt::Display| PlotError::Draw {
            path: path.clone(),
            message: e.to_string(),
        }
    };

    {
        let err = draw_err(&png);
        let root = BitMapBackend::new(&png, fig.size()).into_drawing_area();
        fig.draw(&root, false).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }

    let mut text = String::new();
    {
        let err = draw_err(&svg);
        let root = SVGBackend::with_string(&mut text, fig.size()).into_drawing_area();
        fig.draw(&root, true).map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    std::fs::write(&svg, text).map_err(|source| PlotError::Io {
        path: svg.clone(),
        source,
    })?;
    Ok([png, svg])
}

pub(crate) fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// Fills the background, draws the title and returns the area below it.
pub(crate) fn titled<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let root = root.margin(14, 10, 14, 24);
    // Shrink a title too long for the width (down to 60 %) rather than clip it.
    let avail = root.dim_in_pixel().0 as f64;
    let width = text_width(&root, title, &font(TITLE_SIZE))? as f64;
    let size = if width > avail {
        (TITLE_SIZE * avail / width).max(TITLE_SIZE * 0.6)
    } else {
        TITLE_SIZE
    };
    root.titled(title, font(size))
}

/// Pixel width to reserve for `text` in `style`: the bundled font's width plus 12 %, because
/// SVG viewers substitute their own (usually wider, e.g. DejaVu Sans) sans-serif font.
pub(crate) fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
) -> Result<u32, DrawingAreaErrorKind<DB::ErrorType>> {
    Ok((area.estimate_text_size(text, style)?.0 as f64 * 1.12).ceil() as u32)
}

/// Draws `subtitle` (if any) centred at the top of `area`, in a smaller grey font, and
/// returns the area below it.
pub(crate) fn subtitled<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    subtitle: &str,
    vector: bool,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    if subtitle.is_empty() {
        return Ok(area.clone());
    }
    let (w, _) = area.dim_in_pixel();
    let width = text_width(area, subtitle, &font(SUBTITLE_SIZE))? as f64;
    let size = if width > w as f64 {
        (SUBTITLE_SIZE * w as f64 / width).max(SUBTITLE_SIZE * 0.6)
    } else {
        SUBTITLE_SIZE
    };
    let grey = BLACK.mix(0.7);
    let line_h = (size * 1.5).round() as i32;
    area.draw(&Text::new(
        subtitle,
        (w as i32 / 2, line_h / 2 + center_nudge(vector, size)),
        font(size)
            .color(&grey)
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;
    Ok(area.margin(line_h, 0, 0, 0))
}

/// Pixels to move vertically centred text down on the bitmap backend: plotters' ab_glyph
/// text sits about a fifth of the font size above the requested centre (the SVG is right).
pub(crate) fn center_nudge(vector: bool, size: f64) -> i32 {
    if vector {
        0
    } else {
        (size * 0.22).round() as i32
    }
}

/// Draws "no data" in the middle of `area`.
pub(crate) fn no_data<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    vector: bool,
) -> DrawResult<DB> {
    let (w, h) = area.dim_in_pixel();
    area.draw(&Text::new(
        "no data",
        (
            w as i32 / 2,
            h as i32 / 2 + center_nudge(vector, AXIS_DESC_SIZE),
        ),
        font(AXIS_DESC_SIZE)
            .color(&BLACK.mix(0.5))
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))
}

/// `text`, cut with an ellipsis if wider than `max` pixels.
pub(crate) fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    max: u32,
) -> Result<String, DrawingAreaErrorKind<DB::ErrorType>> {
    if text_width(area, text, style)? <= max {
        return Ok(text.to_string());
    }
    let mut chars: Vec<char> = text.chars().collect();
    while !chars.is_empty() {
        chars.pop();
        let cut: String = chars.iter().collect::<String>().trim_end().to_string() + "…";
        if text_width(area, &cut, style)? <= max {
            return Ok(cut);
        }
    }
    Ok("…".to_string())
}
