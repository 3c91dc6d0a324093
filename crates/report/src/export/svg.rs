//! The charts of the HTML export, as inline SVG written through maud's
//! templates: horizontal grouped bars (one group per category, one bar
//! per series, interval whiskers, the value and verdict beside each bar)
//! and lines against a numeric axis (linear or log on either axis). Every
//! bar is a `rect.bar` and every point a `circle.pt`, so that a test can
//! count them against the data.

use maud::{html, Markup};

use crate::doc::{num, Axis, Figure, FigureKind, Scale};

/// Series colours (Okabe and Ito's palette, told apart by people with
/// the common colour-vision deficiencies).
pub const PALETTE: [&str; 8] = [
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#8C6D1F", "#000000",
];

pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Round steps for a linear axis from 0 (or `lo`) to `hi`: about five.
pub fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut out = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi * (1.0 + 1e-9) {
        out.push(t);
        t += step;
    }
    out
}

/// Powers of ten between `lo` and `hi` (and 2 and 5 times them when the
/// span is short).
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if lo <= 0.0 || hi < lo || lo.is_nan() || hi.is_nan() {
        return Vec::new();
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let mults: &[f64] = if b - a <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let mut out = Vec::new();
    for e in a..=b {
        for m in mults {
            let v = m * 10f64.powi(e);
            if v >= lo * 0.999 && v <= hi * 1.001 {
                out.push(v);
            }
        }
    }
    out
}

/// Maps values of one axis onto pixels.
struct Map {
    lo: f64,
    hi: f64,
    p0: f64,
    p1: f64,
    log: bool,
}

impl Map {
    fn new(axis: &Axis, lo: f64, hi: f64, p0: f64, p1: f64) -> Map {
        let log = axis.scale == Scale::Log && lo > 0.0;
        let (lo, hi) = if hi > lo {
            (lo, hi)
        } else if log {
            (lo / 2.0, hi * 2.0)
        } else {
            (lo - 1.0, hi + 1.0)
        };
        Map {
            lo,
            hi,
            p0,
            p1,
            log,
        }
    }

    fn at(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        self.p0 + f * (self.p1 - self.p0)
    }
}

fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// The chart of a figure.
pub fn figure(f: &Figure) -> Markup {
    match f.kind {
        FigureKind::Bars => bars(f),
        FigureKind::Lines => lines(f),
    }
}

const W: f64 = 720.0;
const LABEL_W: f64 = 150.0;
const VALUE_W: f64 = 200.0;
const BAR_H: f64 = 14.0;
const GROUP_GAP: f64 = 10.0;

fn bars(f: &Figure) -> Markup {
    let n = f.series.len().max(1);
    let groups = f.x.categories.len();
    let group_h = n as f64 * BAR_H + GROUP_GAP;
    let top = 8.0;
    let h = top + groups as f64 * group_h + 28.0;
    // The axis reaches the longest bar, and a whisker up to half as far
    // again; a longer whisker (few runs give wide intervals) is cut at
    // the axis' end.
    let top_bar = f
        .series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.y)
        .filter(|v| v.is_finite())
        .fold(0.0, f64::max);
    let max = f
        .series
        .iter()
        .flat_map(|s| &s.points)
        .filter_map(|p| p.hi)
        .filter(|v| v.is_finite())
        .fold(top_bar, f64::max)
        .min(top_bar * 1.5);
    let ticks = linear_ticks(0.0, if max > 0.0 { max } else { 1.0 });
    let top_tick = ticks.last().copied().unwrap_or(1.0).max(max);
    let map = Map::new(&f.y, 0.0, top_tick, LABEL_W, W - VALUE_W);
    let axis_y = top + groups as f64 * group_h;
    html! {
        svg class="chart bars" viewBox={"0 0 " (W) " " (px(h))} role="img" aria-label=(f.title) {
            @for t in &ticks {
                line class="grid" x1=(px(map.at(*t))) x2=(px(map.at(*t))) y1=(px(top)) y2=(px(axis_y)) {}
                text class="tick" x=(px(map.at(*t))) y=(px(axis_y + 14.0)) text-anchor="middle" { (num::fmt(*t)) }
            }
            text class="axis" x=(px((LABEL_W + W - VALUE_W) / 2.0)) y=(px(axis_y + 26.0)) text-anchor="middle" { (f.y.label) }
            @for (g, cat) in f.x.categories.iter().enumerate() {
                @let gy = top + g as f64 * group_h;
                text class="cat" x=(px(LABEL_W - 6.0)) y=(px(gy + n as f64 * BAR_H / 2.0 + 4.0)) text-anchor="end" { (cat) }
                @for (si, s) in f.series.iter().enumerate() {
                    @for p in s.points.iter().filter(|p| p.x as usize == g && p.y.is_finite()) {
                        @let y = gy + si as f64 * BAR_H;
                        @let x1 = map.at(p.y.max(0.0));
                        rect class={"bar tone-" (tone(p.tone))} data-series=(s.name) data-value=(p.y)
                            x=(px(LABEL_W)) y=(px(y + 1.0)) width=(px((x1 - LABEL_W).max(0.5))) height=(px(BAR_H - 2.0)) fill=(colour(si)) {
                            title { (cat) " · " (s.name) ": " (p.label) }
                        }
                        @let end = p.hi.filter(|_| p.lo.is_some()).map_or(x1, |h| map.at(h.min(top_tick)).max(x1));
                        @if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
                            @let (a, b) = (map.at(lo.max(0.0)), map.at(hi.min(top_tick)));
                            line class="whisker" x1=(px(a)) x2=(px(b)) y1=(px(y + BAR_H / 2.0)) y2=(px(y + BAR_H / 2.0)) {}
                            line class="whisker" x1=(px(a)) x2=(px(a)) y1=(px(y + 3.0)) y2=(px(y + BAR_H - 3.0)) {}
                            line class="whisker" x1=(px(b)) x2=(px(b)) y1=(px(y + 3.0)) y2=(px(y + BAR_H - 3.0)) {}
                        }
                        text class={"value tone-" (tone(p.tone))} x=(px(end + 4.0)) y=(px(y + BAR_H - 3.0)) {
                            (p.label)
                            @if !p.marks.is_empty() { " ⚠" (p.marks.join(",")) }
                        }
                    }
                }
            }
        }
    }
}

fn tone(t: crate::doc::Tone) -> &'static str {
    match t {
        crate::doc::Tone::Plain => "plain",
        crate::doc::Tone::Good => "good",
        crate::doc::Tone::Bad => "bad",
        crate::doc::Tone::Warn => "warn",
    }
}

const LH: f64 = 340.0;
const ML: f64 = 70.0;
const MR: f64 = 28.0;
const MT: f64 = 10.0;
const MB: f64 = 44.0;

fn tick_text(axis: &Axis, v: f64) -> String {
    axis.ticks
        .iter()
        .find(|(x, _)| (*x - v).abs() <= 1e-9 * v.abs().max(1.0))
        .map(|(_, t)| t.clone())
        .unwrap_or_else(|| num::fmt(v))
}

fn lines(f: &Figure) -> Markup {
    let pts = || f.series.iter().flat_map(|s| &s.points);
    let finite = |v: &f64| v.is_finite();
    let xs: Vec<f64> = pts().map(|p| p.x).filter(finite).collect();
    let ys: Vec<f64> = pts()
        .flat_map(|p| [Some(p.y), p.lo, p.hi])
        .flatten()
        .filter(finite)
        .filter(|v| f.y.scale == Scale::Linear || *v > 0.0)
        .collect();
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (x_lo, x_hi) = if xs.is_empty() {
        (0.0, 1.0)
    } else {
        (min(&xs), max(&xs))
    };
    let (mut y_lo, y_hi) = if ys.is_empty() {
        (0.0, 1.0)
    } else {
        (min(&ys), max(&ys))
    };
    if f.y.scale == Scale::Linear {
        y_lo = y_lo.min(0.0);
    }
    let mut xticks: Vec<f64> = if !f.x.ticks.is_empty() {
        f.x.ticks.iter().map(|(x, _)| *x).collect()
    } else if f.x.scale == Scale::Log {
        log_ticks(x_lo, x_hi)
    } else {
        linear_ticks(x_lo, x_hi)
    };
    // Counts (samples, runs) take whole-number ticks.
    if f.x.ticks.is_empty() && xs.iter().all(|x| x.fract() == 0.0) {
        xticks.retain(|x| x.fract() == 0.0);
    }
    let yticks: Vec<f64> = if !f.y.ticks.is_empty() {
        f.y.ticks.iter().map(|(y, _)| *y).collect()
    } else if f.y.scale == Scale::Log {
        log_ticks(y_lo, y_hi)
    } else {
        linear_ticks(y_lo, y_hi)
    };
    let y_hi = if f.y.scale == Scale::Linear {
        yticks.last().copied().unwrap_or(y_hi).max(y_hi)
    } else {
        y_hi
    };
    let mx = Map::new(&f.x, x_lo, x_hi, ML, W - MR);
    let my = Map::new(&f.y, y_lo, y_hi, LH - MB, MT);
    html! {
        svg class="chart lines" viewBox={"0 0 " (W) " " (LH)} role="img" aria-label=(f.title) {
            @for t in yticks.iter().filter(|t| **t >= my.lo && **t <= my.hi) {
                line class="grid" x1=(px(ML)) x2=(px(W - MR)) y1=(px(my.at(*t))) y2=(px(my.at(*t))) {}
                text class="tick" x=(px(ML - 4.0)) y=(px(my.at(*t) + 4.0)) text-anchor="end" { (tick_text(&f.y, *t)) }
            }
            @for t in xticks.iter().filter(|t| **t >= mx.lo && **t <= mx.hi) {
                line class="grid" x1=(px(mx.at(*t))) x2=(px(mx.at(*t))) y1=(px(MT)) y2=(px(LH - MB)) {}
                text class="tick" x=(px(mx.at(*t))) y=(px(LH - MB + 14.0)) text-anchor="middle" { (tick_text(&f.x, *t)) }
            }
            text class="axis" x=(px((ML + W - MR) / 2.0)) y=(px(LH - 8.0)) text-anchor="middle" { (f.x.label) }
            text class="axis" transform={"translate(14," (px((MT + LH - MB) / 2.0)) ") rotate(-90)"} text-anchor="middle" { (f.y.label) }
            @for (si, s) in f.series.iter().enumerate() {
                @let ok: Vec<_> = s.points.iter().filter(|p| p.x.is_finite() && p.y.is_finite() && (f.y.scale == Scale::Linear || p.y > 0.0)).collect();
                @let path: Vec<String> = ok.iter().map(|p| format!("{},{}", px(mx.at(p.x)), px(my.at(p.y)))).collect();
                polyline class="line" data-series=(s.name) points=(path.join(" ")) fill="none" stroke=(colour(si)) stroke-width="2" {}
                @for p in &ok {
                    @if let (Some(lo), Some(hi)) = (p.lo, p.hi) {
                        line class="whisker" x1=(px(mx.at(p.x))) x2=(px(mx.at(p.x))) y1=(px(my.at(lo.max(my.lo)))) y2=(px(my.at(hi))) stroke=(colour(si)) {}
                    }
                    circle class={"pt tone-" (tone(p.tone))} data-series=(s.name) data-value=(p.y) cx=(px(mx.at(p.x))) cy=(px(my.at(p.y))) r="3.5" fill=(colour(si)) {
                        title { (s.name) ": " (tick_text(&f.x, p.x)) " → " (if p.label.is_empty() { num::fmt(p.y) } else { p.label.clone() })
                            @if !p.marks.is_empty() { " ⚠" (p.marks.join(",")) } }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(
            linear_ticks(0.0, 440.0),
            vec![0.0, 100.0, 200.0, 300.0, 400.0]
        );
        assert_eq!(log_ticks(3.0, 2000.0), vec![10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(3.0, 60.0), vec![5.0, 10.0, 20.0, 50.0]);
    }
}
