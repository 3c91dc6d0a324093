//! The HTML report in a real browser: headless Chromium opens the page
//! `iolab report` writes for a stored result of every kind (and for
//! several side by side), and the test reads the DOM Chromium built
//! (`--dump-dom`): as many bars and points as the data has, and no
//! request for anything outside the page (Chromium runs behind a proxy
//! of the test's own that records every request; a page with an image
//! elsewhere shows that it would see one). A screenshot of each page must
//! not be blank: it is checked against one of an empty page, and written
//! to `$IOLAB_DOC_IMAGES` when set (docs/img holds those of
//! docs/report.md). Skipped, with the reason, where Chromium is missing.

mod common;

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command as Proc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use iolab_report::doc::{Block, Document, FigureKind};
use iolab_store::{Kind, Record, Store};
use iolab_testkit::require;

/// The stored records of tests/data/records (results of iolab quick,
/// quick --repeat 2, meta, sweep, run and compare, as the store keeps
/// them).
fn fixture(name: &str) -> Record {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/records")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The document the kind's page is drawn from.
fn document(r: &Record) -> Document {
    use iolab_report::kinds;
    let j = &r.result_json;
    match r.kind {
        Kind::Quick => kinds::quick::document(&serde_json::from_str(j).unwrap()),
        Kind::Meta => kinds::meta::document(&serde_json::from_str(j).unwrap()),
        Kind::Sweep => kinds::sweep::document(&serde_json::from_str(j).unwrap()),
        Kind::Run => kinds::run::document(&serde_json::from_str(j).unwrap()),
        Kind::Compare => kinds::compare::document(&serde_json::from_str(j).unwrap()),
    }
}

/// The bars and points of a document's figures.
fn marks(doc: &Document) -> (usize, usize) {
    let (mut bars, mut points) = (0, 0);
    for b in &doc.blocks {
        if let Block::Figure(f) = b {
            let n = f
                .series
                .iter()
                .flat_map(|s| &s.points)
                .filter(|p| p.y.is_finite() && p.x.is_finite())
                .count();
            match f.kind {
                FigureKind::Bars => bars += n,
                FigureKind::Lines => points += n,
            }
        }
    }
    (bars, points)
}

fn chromium_binary() -> &'static str {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|n| iolab_testkit::req::on_path(n))
        .unwrap_or("chromium")
}

/// A proxy that answers nothing and notes the first line of every
/// request made through it.
struct Proxy {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Proxy {
    fn start() -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let _ = conn.set_nonblocking(false);
                        let _ = conn.set_read_timeout(Some(Duration::from_secs(2)));
                        let mut line = String::new();
                        let _ = BufReader::new(conn).read_line(&mut line);
                        // A connection that sends no request line (one
                        // Chromium opens ahead and closes unused, or
                        // leaves idle past the timeout) asks for nothing.
                        if !line.trim().is_empty() {
                            s.lock().unwrap().push(line.trim().to_string());
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        });
        Proxy {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// The requests noted so far, but those Chromium makes for itself
    /// (its clock, updates and accounts at Google).
    fn page_requests(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|l| {
                let host = l
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("")
                    .trim_start_matches("http://")
                    .trim_start_matches("https://")
                    .split(['/', ':'])
                    .next()
                    .unwrap_or("")
                    .to_string();
                ![
                    ".google.com",
                    ".googleapis.com",
                    ".gstatic.com",
                    ".gvt1.com",
                ]
                .iter()
                .any(|d| host.ends_with(d))
            })
            .cloned()
            .collect()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Chromium, headless, behind the proxy, with a profile of its own in
/// `dir`, on `page`, with `what` (`--dump-dom`, `--screenshot=...`).
fn chromium(dir: &Path, proxy: &Proxy, page: &Path, what: &[String]) -> String {
    let out = Proc::new("timeout")
        .arg("180")
        .arg(chromium_binary())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--hide-scrollbars",
            "--window-size=1000,2400",
        ])
        .arg(format!("--proxy-server=http://127.0.0.1:{}", proxy.port))
        .arg("--proxy-bypass-list=<-loopback>")
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(what)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "chromium on {}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn screenshot(dir: &Path, proxy: &Proxy, page: &Path, name: &str) -> PathBuf {
    let png = dir.join(format!("{name}.png"));
    chromium(
        dir,
        proxy,
        page,
        &[format!("--screenshot={}", png.display())],
    );
    assert!(png.exists(), "no screenshot of {name}");
    png
}

/// Stores `records` in a fresh database and writes `iolab report IDS`
/// to `page`.
fn report(dir: &Path, records: &[Record], page: &Path) {
    let db = dir.join("results.db");
    let _ = std::fs::remove_file(&db);
    let mut store = Store::open(&db).unwrap();
    let ids: Vec<String> = records
        .iter()
        .map(|r| store.insert(r).unwrap().to_string())
        .collect();
    drop(store);
    let out = common::iolab()
        .env("IOLAB_DB", &db)
        .arg("report")
        .args(&ids)
        .arg("-o")
        .arg(page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn reports_of_every_kind_draw_their_data_in_chromium_and_ask_for_nothing_outside() {
    require!(chromium);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let proxy = Proxy::start();

    // The proxy sees what a page asks for elsewhere.
    let control = dir.join("control.html");
    std::fs::write(
        &control,
        "<html><body><img src=\"http://iolab-test.invalid/x.png\"></body></html>",
    )
    .unwrap();
    chromium(dir, &proxy, &control, &["--dump-dom".to_string()]);
    assert!(
        proxy
            .page_requests()
            .iter()
            .any(|l| l.contains("iolab-test.invalid")),
        "the proxy saw no request of the control page: {:?}",
        proxy.seen.lock().unwrap()
    );
    proxy.seen.lock().unwrap().clear();

    let blank = dir.join("blank.html");
    std::fs::write(&blank, "<html><body></body></html>").unwrap();
    let blank_png = screenshot(dir, &proxy, &blank, "blank");
    let blank_size = std::fs::metadata(&blank_png).unwrap().len();
    let images = std::env::var_os("IOLAB_DOC_IMAGES").map(PathBuf::from);

    let kinds = ["quick", "quick-repeat", "meta", "sweep", "run", "compare"];
    for name in kinds {
        let rec = fixture(name);
        let page = dir.join(format!("{name}.html"));
        report(dir, std::slice::from_ref(&rec), &page);
        let html = std::fs::read_to_string(&page).unwrap();
        for bad in ["http:", "https:", " src=", "<script", "url("] {
            assert!(!html.contains(bad), "{name}: the page holds {bad}");
        }
        let dom = chromium(dir, &proxy, &page, &["--dump-dom".to_string()]);
        let (bars, points) = marks(&document(&rec));
        assert!(bars + points > 0, "{name}: nothing to draw");
        assert_eq!(
            dom.matches("<rect class=\"bar").count(),
            bars,
            "{name}: bars"
        );
        assert_eq!(
            dom.matches("<circle class=\"pt").count(),
            points,
            "{name}: points"
        );
        assert!(dom.contains("<details class=\"provenance\""), "{name}");
        let png = screenshot(dir, &proxy, &page, name);
        let size = std::fs::metadata(&png).unwrap().len();
        assert!(
            size > 4 * blank_size && size > 20_000,
            "{name}: the screenshot looks blank ({size} bytes, an empty page {blank_size})"
        );
        if let Some(to) = &images {
            std::fs::copy(&png, to.join(format!("report-{name}.png"))).unwrap();
        }
    }

    // Several results side by side: each one's charts, and one chart per
    // unit of the metrics they share, a bar per result.
    let recs = [fixture("quick"), fixture("quick-repeat")];
    let page = dir.join("side.html");
    report(dir, &recs, &page);
    let dom = chromium(dir, &proxy, &page, &["--dump-dom".to_string()]);
    let own: usize = recs.iter().map(|r| marks(&document(r)).0).sum();
    let shared = recs[0]
        .metrics
        .iter()
        .filter(|m| m.value.is_finite())
        .filter(|m| {
            recs[1]
                .metrics
                .iter()
                .any(|n| n.name == m.name && n.value.is_finite())
        })
        .count();
    assert!(shared > 0);
    // At most a dozen metrics per unit's chart.
    let mut units: Vec<&str> = recs[0].metrics.iter().map(|m| m.unit.as_str()).collect();
    units.dedup();
    let bars = dom.matches("<rect class=\"bar").count();
    assert!(bars > own, "{bars} bars, {own} of the results' own");
    assert!(
        bars <= own + 2 * shared,
        "{bars} bars, {own} own, {shared} shared"
    );
    assert!(
        dom.contains("results side by side"),
        "the side-by-side section"
    );
    let png = screenshot(dir, &proxy, &page, "side");
    if let Some(to) = &images {
        std::fs::copy(&png, to.join("report-side-by-side.png")).unwrap();
    }

    let asked = proxy.page_requests();
    assert!(asked.is_empty(), "the pages asked for {asked:?}");
}
