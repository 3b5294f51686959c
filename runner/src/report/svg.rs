//! A small element tree for the HTML report's markup and its inline SVG: elements, attributes
//! and text, rendered with every attribute value and text escaped, so that a program name or
//! an operation such as `a<b` cannot break the page. The only unescaped content is
//! [`El::raw`], which takes `&'static str` (the report's own CSS and script, never input).
//!
//! No crate: the `svg` crate builds SVG documents only (the report also needs HTML tables
//! around them) and this is a hundred lines; numbers are formatted here so that paths stay
//! short ([`num`]).

use std::fmt::Write as _;

/// One element: a name, attributes in order, children.
#[derive(Clone, Debug)]
pub struct El {
    name: &'static str,
    attrs: Vec<(&'static str, String)>,
    children: Vec<Child>,
}

#[derive(Clone, Debug)]
enum Child {
    El(El),
    Text(String),
    Raw(&'static str),
}

/// HTML elements written without a closing tag.
const VOID: &[&str] = &["meta", "br", "hr"];

impl El {
    pub fn new(name: &'static str) -> El {
        El {
            name,
            attrs: Vec::new(),
            children: Vec::new(),
        }
    }

    /// An attribute (its value is escaped when rendered).
    pub fn attr(mut self, key: &'static str, value: impl std::fmt::Display) -> El {
        self.attrs.push((key, value.to_string()));
        self
    }

    /// `class="..."`.
    pub fn class(self, c: &str) -> El {
        self.attr("class", c)
    }

    /// A child element.
    pub fn child(mut self, c: El) -> El {
        self.children.push(Child::El(c));
        self
    }

    /// Child elements.
    pub fn children(mut self, cs: impl IntoIterator<Item = El>) -> El {
        self.children.extend(cs.into_iter().map(Child::El));
        self
    }

    /// Append a child element in place.
    pub fn push(&mut self, c: El) {
        self.children.push(Child::El(c));
    }

    /// Text content (escaped when rendered).
    pub fn text(mut self, t: impl Into<String>) -> El {
        self.children.push(Child::Text(t.into()));
        self
    }

    /// Content written as it is: the report's own style sheet and script only.
    pub fn raw(mut self, t: &'static str) -> El {
        self.children.push(Child::Raw(t));
        self
    }

    /// A `<title>` child: the tooltip of an SVG shape.
    pub fn tooltip(self, t: impl Into<String>) -> El {
        self.child(El::new("title").text(t))
    }

    /// The element as markup.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_into(&mut out);
        out
    }

    fn render_into(&self, out: &mut String) {
        out.push('<');
        out.push_str(self.name);
        for (k, v) in &self.attrs {
            let _ = write!(out, " {k}=\"{}\"", escape(v));
        }
        out.push('>');
        if VOID.contains(&self.name) {
            return;
        }
        for c in &self.children {
            match c {
                Child::El(e) => e.render_into(out),
                Child::Text(t) => out.push_str(&escape(t)),
                Child::Raw(t) => out.push_str(t),
            }
        }
        let _ = write!(out, "</{}>", self.name);
    }
}

/// Text or an attribute value with `& < > " '` escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with at most two decimals and no trailing zeros (`12`, `3.5`, `-0.25`).
pub fn num(x: f64) -> String {
    let x = if x.is_finite() { x } else { 0.0 };
    let s = format!("{x:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// An `<svg>` root of `w` × `h` user units (drawn at that size).
pub fn svg(w: f64, h: f64) -> El {
    El::new("svg")
        .attr("xmlns", "http://www.w3.org/2000/svg")
        .attr("width", num(w))
        .attr("height", num(h))
        .attr("viewBox", format!("0 0 {} {}", num(w), num(h)))
}

/// A path's `d` attribute, built with absolute commands.
#[derive(Clone, Debug, Default)]
pub struct PathData(String);

impl PathData {
    pub fn new() -> PathData {
        PathData(String::new())
    }

    pub fn move_to(mut self, x: f64, y: f64) -> PathData {
        let _ = write!(self.0, "M{} {}", num(x), num(y));
        self
    }

    pub fn line_to(mut self, x: f64, y: f64) -> PathData {
        let _ = write!(self.0, "L{} {}", num(x), num(y));
        self
    }

    pub fn close(mut self) -> PathData {
        self.0.push('Z');
        self
    }

    /// A `<path>` with this data.
    pub fn path(self) -> El {
        El::new("path").attr("d", self.0)
    }
}

/// `<line>` from (x1, y1) to (x2, y2).
pub fn line(x1: f64, y1: f64, x2: f64, y2: f64) -> El {
    El::new("line")
        .attr("x1", num(x1))
        .attr("y1", num(y1))
        .attr("x2", num(x2))
        .attr("y2", num(y2))
}

/// `<rect>` at (x, y) of w × h.
pub fn rect(x: f64, y: f64, w: f64, h: f64) -> El {
    El::new("rect")
        .attr("x", num(x))
        .attr("y", num(y))
        .attr("width", num(w.max(0.0)))
        .attr("height", num(h.max(0.0)))
}

/// `<text>` at (x, y).
pub fn text(x: f64, y: f64, t: impl Into<String>) -> El {
    El::new("text").attr("x", num(x)).attr("y", num(y)).text(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes_are_escaped_raw_is_not() {
        let e = El::new("g")
            .attr("data-x", "a\"b<c>&'")
            .child(El::new("text").text("x < y && z > \"w\""))
            .child(El::new("style").raw("a > b {}"));
        assert_eq!(
            e.render(),
            "<g data-x=\"a&quot;b&lt;c&gt;&amp;&#39;\"><text>x &lt; y &amp;&amp; z &gt; \
             &quot;w&quot;</text><style>a > b {}</style></g>"
        );
    }

    #[test]
    fn void_elements_have_no_closing_tag_others_always_do() {
        assert_eq!(
            El::new("meta").attr("charset", "utf-8").render(),
            "<meta charset=\"utf-8\">"
        );
        assert_eq!(El::new("td").render(), "<td></td>");
    }

    #[test]
    fn numbers_are_short_and_paths_compose() {
        assert_eq!(num(12.0), "12");
        assert_eq!(num(3.5), "3.5");
        assert_eq!(num(-0.001), "0");
        assert_eq!(num(f64::NAN), "0");
        assert_eq!(num(1.239), "1.24");
        let d = PathData::new().move_to(0.0, 1.5).line_to(2.0, 3.0).close();
        assert_eq!(d.path().render(), "<path d=\"M0 1.5L2 3Z\"></path>");
    }
}
