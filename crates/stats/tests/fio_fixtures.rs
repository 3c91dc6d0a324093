//! Checks `LatHist` and `Moments` against output of the real fio 3.33 saved
//! under `tests/fixtures/` (see the README there for the commands).
//!
//! Each json+ `bins` object is rebuilt into a `LatHist`; every bin key must
//! be a bin's representative value, and the percentiles computed from the
//! rebuilt histogram must equal the ones fio printed. The raw-sample
//! fixtures go further: fio's per-I/O latency logs are recorded into per-job
//! histograms and moments, merged in job order as `group_reporting` does,
//! and compared with fio's bins, percentiles, min, max, mean and stddev.

use std::path::PathBuf;

use iolab_stats::{LatHist, Moments};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// fio's json+ `bins` as a histogram, checking each key is a bin value.
fn hist_from_bins(bins: &Value) -> LatHist {
    let mut h = LatHist::new();
    for (key, count) in bins.as_object().expect("bins is an object") {
        let value: u64 = key.parse().expect("bin key is an integer");
        let idx = LatHist::value_to_index(value);
        assert_eq!(
            LatHist::index_to_value(idx),
            value,
            "fio bin key {value} is not the representative value of bin {idx}"
        );
        h.record_n(value, count.as_u64().expect("bin count is an integer"));
    }
    h
}

/// fio's `percentile` object as (percentile, value), ascending.
fn fio_percentiles(lat: &Value) -> Vec<(f64, u64)> {
    let mut out: Vec<(f64, u64)> = lat["percentile"]
        .as_object()
        .expect("percentile is an object")
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// Compares one clat_ns/lat_ns object's bins and percentiles; returns how
/// many percentiles were compared.
fn check_lat_object(what: &str, lat: &Value, hist: &LatHist) -> usize {
    let n = lat["N"].as_u64().unwrap();
    assert_eq!(hist.total(), n, "{what}: histogram total vs N");

    let fio_bins = hist_from_bins(&lat["bins"]);
    assert_eq!(hist, &fio_bins, "{what}: bins differ");
    let ours: Vec<(String, u64)> = hist
        .nonzero_bins()
        .map(|(v, c)| (v.to_string(), c))
        .collect();
    assert_eq!(ours.len(), lat["bins"].as_object().unwrap().len());
    for (key, count) in &ours {
        assert_eq!(lat["bins"][key].as_u64(), Some(*count), "{what}: bin {key}");
    }

    let want = fio_percentiles(lat);
    let list: Vec<f64> = want.iter().map(|&(p, _)| p).collect();
    let got = hist.percentiles(&list);
    assert_eq!(got, want, "{what}: percentiles differ");

    // The highest non-empty bin is the 100th percentile and is >= max.
    let top = hist.percentiles(&[100.0])[0].1;
    let max = lat["max"].as_u64().unwrap();
    assert_eq!(LatHist::value_to_index(top), LatHist::value_to_index(max));
    want.len()
}

#[test]
fn percentiles_from_fio_json_plus_bins_match_fio() {
    let mut compared = 0;
    let mut bins_used = 0;
    for name in [
        "fio-3.33-psync-direct-bssplit.json",
        "fio-3.33-psync-buffered-plist.json",
    ] {
        let doc = fixture(name);
        assert_eq!(doc["fio version"], "fio-3.33");
        for ddir in ["read", "write", "sync"] {
            for kind in ["clat_ns", "lat_ns"] {
                let lat = &doc[ddir][kind];
                if lat.is_null() {
                    continue;
                }
                let hist = hist_from_bins(&lat["bins"]);
                bins_used += hist.nonzero_bins().count();
                compared += check_lat_object(&format!("{name} {ddir} {kind}"), lat, &hist);
            }
        }
    }
    // 9 latency objects with 17 or 20 percentiles each, over ~1200 bins.
    assert_eq!(compared, 4 * 17 + 5 * 20);
    assert!(bins_used > 1000, "only {bins_used} bins exercised");
}

/// Records a raw-sample fixture's per-job latencies and checks the merged
/// result against fio's `clat_ns` for each direction present; returns the
/// sorted samples per direction.
fn check_raw_fixture(name: &str) -> Vec<Vec<u64>> {
    let doc = fixture(name);
    assert_eq!(doc["fio version"], "fio-3.33");
    let mut sorted = Vec::new();
    for ddir in ["read", "write"] {
        let Some(jobs) = doc["clat_samples"][ddir].as_array() else {
            continue;
        };
        let mut group_hist = LatHist::new();
        let mut group = Moments::new();
        let mut all = Vec::new();
        for samples in jobs {
            let mut hist = LatHist::new();
            let mut moments = Moments::new();
            for s in samples.as_array().unwrap() {
                let ns = s.as_u64().unwrap();
                hist.record(ns);
                moments.record(ns);
                all.push(ns);
            }
            group_hist.merge(&hist);
            group.merge(&moments);
        }

        let what = format!("{name} {ddir} clat_ns");
        let lat = &doc[ddir]["clat_ns"];
        check_lat_object(&what, lat, &group_hist);
        assert_eq!(group.count(), lat["N"].as_u64().unwrap(), "{what}");
        assert_eq!(group.min(), lat["min"].as_u64(), "{what}");
        assert_eq!(group.max(), lat["max"].as_u64(), "{what}");
        // fio prints floats with "%f".
        let fio_mean = format!("{:.6}", lat["mean"].as_f64().unwrap());
        let fio_dev = format!("{:.6}", lat["stddev"].as_f64().unwrap());
        assert_eq!(format!("{:.6}", group.mean()), fio_mean, "{what} mean");
        assert_eq!(format!("{:.6}", group.stdev()), fio_dev, "{what} stddev");
        all.sort_unstable();
        sorted.push(all);
    }
    sorted
}

#[test]
fn raw_fio_samples_reproduce_fio_group_stats() {
    let doc = fixture("fio-3.33-psync-2jobs-raw-clat.json");
    assert_eq!(doc["job options"]["numjobs"], "2");
    let dirs = check_raw_fixture("fio-3.33-psync-2jobs-raw-clat.json");
    assert_eq!(dirs.len(), 2);
}

#[test]
fn percentile_rounding_matches_fio_on_ties() {
    // 50 samples and percentiles whose rank p / 100 * 50 is an integer, so
    // the rounding of that product decides between neighbouring samples.
    let name = "fio-3.33-psync-50-samples-rounding.json";
    let sorted = check_raw_fixture(name);
    let xs = &sorted[0];
    assert_eq!(xs.len(), 50);

    // The fixture discriminates: plain f64 and the long double order of
    // fio's source each pick a different sample than fio did at least once.
    let doc = fixture(name);
    let want = fio_percentiles(&doc["read"]["clat_ns"]);
    let bin = |rank: usize| LatHist::index_to_value(LatHist::value_to_index(xs[rank - 1]));
    let f64_rank = |p: f64| (p / 100.0 * 50.0).ceil() as usize;
    let source_rank = |p: f64| match p as u32 {
        14 => 7,
        28 => 14,
        30 => 16,
        54 => 28,
        56 => 28,
        60 => 31,
        _ => unreachable!(),
    };
    assert!(want.iter().any(|&(p, v)| bin(f64_rank(p)) != v));
    assert!(want.iter().any(|&(p, v)| bin(source_rank(p)) != v));
}
