//! Statistics and the result model: latency histograms in fio's log-linear
//! layout, running moments, time series, repeat statistics, and `RunResult`,
//! which every renderer and the store read. No threads and no I/O here.
