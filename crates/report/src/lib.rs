//! Renderers: a `RunResult` in, bytes out. fio's normal text, terse, JSON and
//! json+, comparison tables and the HTML report.
