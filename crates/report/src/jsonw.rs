//! A small JSON tree written in fio's layout: two spaces per level,
//! `"key" : value`, floats as C's `%f`, strings escaped the way fio escapes
//! them (backslash and quote; iolab also escapes control characters, which
//! fio would leave raw and so make the document invalid). Keys keep the
//! order they were added in.

use std::fmt::Write;

use crate::units::f6;

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    UInt(u64),
    Int(i64),
    /// Printed as `%f`.
    Float(f64),
    Bool(bool),
    /// A value that is not known.
    Null,
    Str(String),
    Arr(Vec<Json>),
    Obj(Obj),
}

/// An object: pairs in insertion order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Obj(pub Vec<(String, Json)>);

impl Obj {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, key: impl Into<String>, v: Json) -> &mut Self {
        self.0.push((key.into(), v));
        self
    }

    pub fn uint(&mut self, key: impl Into<String>, v: u64) -> &mut Self {
        self.add(key, Json::UInt(v))
    }

    pub fn int(&mut self, key: impl Into<String>, v: i64) -> &mut Self {
        self.add(key, Json::Int(v))
    }

    pub fn float(&mut self, key: impl Into<String>, v: f64) -> &mut Self {
        self.add(key, Json::Float(v))
    }

    /// A string pair; fio drops pairs whose string is empty, and so does
    /// this.
    pub fn str(&mut self, key: impl Into<String>, v: &str) -> &mut Self {
        if v.is_empty() {
            return self;
        }
        self.add(key, Json::Str(v.to_string()))
    }

    pub fn obj(&mut self, key: impl Into<String>, v: Obj) -> &mut Self {
        self.add(key, Json::Obj(v))
    }

    /// The value of `key`, to add to.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Writes the object as a document, with fio's trailing newline.
    pub fn to_document(&self) -> String {
        let mut out = String::new();
        write_obj(&mut out, self, 0);
        out.push('\n');
        out
    }
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

fn write_obj(out: &mut String, o: &Obj, level: usize) {
    out.push_str("{\n");
    for (i, (k, v)) in o.0.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(out, level + 1);
        write_str(out, k);
        out.push_str(" : ");
        write_value(out, v, level + 1);
    }
    out.push('\n');
    indent(out, level);
    out.push('}');
}

fn write_value(out: &mut String, v: &Json, level: usize) {
    match v {
        Json::UInt(n) => {
            let _ = write!(out, "{n}");
        }
        Json::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Json::Float(x) => out.push_str(&f6(*x)),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Null => out.push_str("null"),
        Json::Str(s) => write_str(out, s),
        Json::Obj(o) => write_obj(out, o, level),
        Json::Arr(a) => {
            out.push_str("[\n");
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                write_value(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
    }
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_layout() {
        let mut inner = Obj::new();
        inner.uint("min", 0).float("mean", 0.0);
        let mut o = Obj::new();
        o.str("fio version", "fio-3.33")
            .str("empty", "")
            .obj("lat", inner)
            .add("jobs", Json::Arr(vec![Json::Obj(Obj::new())]))
            .str("q", "a\"b\\c\n");
        assert_eq!(
            o.to_document(),
            "{\n  \"fio version\" : \"fio-3.33\",\n  \"lat\" : {\n    \"min\" : 0,\n    \
             \"mean\" : 0.000000\n  },\n  \"jobs\" : [\n    {\n\n    }\n  ],\n  \
             \"q\" : \"a\\\"b\\\\c\\n\"\n}\n"
        );
    }
}
