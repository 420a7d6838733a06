//! The XML documents of the service's account-level and ACL operations (service properties, stored access
//! policies): written with `quick-xml`, read into a small tree of elements whose depth is bounded.
//!
//! Layer: wire.

use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::{Reader, Writer};

/// The writer the documents are written with.
pub(crate) type XmlWriter = Writer<Vec<u8>>;

/// A whole document: the XML declaration, then the element `root` with what `content` writes inside it.
pub(crate) fn write_document(root: &str, content: impl FnOnce(&mut XmlWriter) -> std::io::Result<()>) -> Vec<u8> {
    let mut writer = Writer::new(Vec::new());
    let written: std::io::Result<()> = (|| {
        writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("utf-8"), None)))?;
        writer.create_element(root).write_inner_content(content)?;
        Ok(())
    })();
    written.expect("writing to a Vec cannot fail");
    writer.into_inner()
}

/// An element `name` holding the text `value`, escaped.
pub(crate) fn text(w: &mut XmlWriter, name: &str, value: &str) -> std::io::Result<()> {
    w.create_element(name).write_text_content(BytesText::new(value))?;
    Ok(())
}

/// How deep the documents read may nest: theirs is 4 levels; anything deeper is not such a document (and
/// a tree of unbounded depth could not even be dropped without exhausting the stack).
const MAX_DEPTH: usize = 16;

/// One element of a document read: its local name, its text and its child elements.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) children: Vec<Node>,
}

impl Node {
    pub(crate) fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }

    pub(crate) fn required(&self, path: &str, name: &str) -> Result<&Node, String> {
        self.child(name).ok_or_else(|| format!("`{path}` has no `{name}`"))
    }

    pub(crate) fn bool(&self, path: &str, name: &str) -> Result<bool, String> {
        let text = self.required(path, name)?.text.trim();
        match text {
            "true" | "True" => Ok(true),
            "false" | "False" => Ok(false),
            _ => Err(format!("`{path}.{name}` is {text:?}, expected `true` or `false`")),
        }
    }

    pub(crate) fn number(&self, path: &str, name: &str) -> Result<u32, String> {
        let text = self.required(path, name)?.text.trim();
        text.parse().map_err(|_| format!("`{path}.{name}` is {text:?}, expected a whole number of 0 or more"))
    }
}

/// Reads a whole XML document into a tree of elements; the error says what is wrong with it.
pub(crate) fn read_tree(body: &[u8], what: &str) -> Result<Node, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("the {what} are not UTF-8: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader::from_str(text);
    let mut open: Vec<Node> = Vec::new();
    let mut root: Option<Node> = None;
    loop {
        let event = reader.read_event().map_err(|e| format!("the {what} are not XML: {e}"))?;
        let element = |e: &quick_xml::events::BytesStart<'_>| {
            let local = e.local_name();
            let name: &str = local.as_ref();
            Node { name: name.to_owned(), ..Node::default() }
        };
        let finished = match event {
            Event::Start(e) => {
                if open.len() >= MAX_DEPTH {
                    return Err(format!("the {what} nest elements deeper than {MAX_DEPTH} levels"));
                }
                open.push(element(&e));
                None
            }
            Event::Empty(e) => Some(element(&e)),
            Event::End(_) => open.pop(),
            Event::Text(t) => {
                if let Some(node) = open.last_mut() {
                    node.text.push_str(&t.xml10_content());
                }
                None
            }
            Event::CData(t) => {
                if let Some(node) = open.last_mut() {
                    node.text.push_str(&t.xml10_content());
                }
                None
            }
            Event::GeneralRef(r) => {
                let ch = match r.resolve_char_ref() {
                    Ok(Some(ch)) => ch.to_string(),
                    _ => resolve_predefined_entity(&r)
                        .ok_or_else(|| format!("unknown XML entity `&{};` in the {what}", &*r))?
                        .to_owned(),
                };
                if let Some(node) = open.last_mut() {
                    node.text.push_str(&ch);
                }
                None
            }
            Event::Eof => match open.last() {
                Some(node) => return Err(format!("the {what} are not XML: `<{}>` is not closed", node.name)),
                None => break,
            },
            _ => None,
        };
        if let Some(node) = finished {
            match open.last_mut() {
                Some(parent) => parent.children.push(node),
                None if root.is_none() => root = Some(node),
                None => return Err(format!("the {what} are not XML: more than one root element")),
            }
        }
    }
    root.ok_or_else(|| format!("the {what} are empty"))
}
