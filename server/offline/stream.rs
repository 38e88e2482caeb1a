//! One document at a time, and a List's `items` one at a time as the parser reaches them, so
//! reading 100,000 objects never holds more than one of them as a generic JSON value (a whole
//! `kubectl get -o json` List as one value takes several times the size of its text).

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// A document as read: its top-level fields except `items`, and `items` when it was an array,
/// each element handed to the caller's function as it was parsed.
pub(super) enum Document<T> {
    /// An empty YAML document.
    Empty,
    NotAMapping,
    Mapping {
        fields: Map<String, Value>,
        items: Option<Vec<T>>,
    },
}

/// Reads one document, turning each top-level `items` element into a `T` with `item`.
pub(super) struct DocumentSeed<F>(pub F);

impl<'de, T, F: FnMut(usize, Value) -> T> DeserializeSeed<'de> for DocumentSeed<F> {
    type Value = Document<T>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(DocumentVisitor(self.0))
    }
}

struct DocumentVisitor<F>(F);

/// Anything but a mapping (or nothing) at the top: consumed and reported as such.
macro_rules! not_a_mapping {
    ($($method:ident($($arg:ty)?)),*) => {
        $(fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<Self::Value, E> {
            Ok(Document::NotAMapping)
        })*
    };
}

impl<'de, T, F: FnMut(usize, Value) -> T> Visitor<'de> for DocumentVisitor<F> {
    type Value = Document<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object or List")
    }

    not_a_mapping!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_f64(f64),
        visit_str(&str),
        visit_bytes(&[u8])
    );

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Document::Empty)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Document::Empty)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(Document::NotAMapping)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_enum(data)?;
        Ok(Document::NotAMapping)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Map::new();
        let mut items = None;
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                items = map.next_value_seed(ItemsSeed(&mut self.0))?;
            } else {
                let value = map.next_value::<Value>()?;
                fields.insert(key, value);
            }
        }
        Ok(Document::Mapping { fields, items })
    }
}

/// `items`: the elements, each turned into a `T` as soon as it is parsed; None when `items`
/// is not an array.
struct ItemsSeed<'f, F>(&'f mut F);

impl<'de, T, F: FnMut(usize, Value) -> T> DeserializeSeed<'de> for ItemsSeed<'_, F> {
    type Value = Option<Vec<T>>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(ItemsVisitor(self.0))
    }
}

struct ItemsVisitor<'f, F>(&'f mut F);

macro_rules! not_an_array {
    ($($method:ident($($arg:ty)?)),*) => {
        $(fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<Self::Value, E> {
            Ok(None)
        })*
    };
}

impl<'de, T, F: FnMut(usize, Value) -> T> Visitor<'de> for ItemsVisitor<'_, F> {
    type Value = Option<Vec<T>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a List's items")
    }

    not_an_array!(
        visit_bool(bool),
        visit_i64(i64),
        visit_u64(u64),
        visit_f64(f64),
        visit_str(&str),
        visit_bytes(&[u8]),
        visit_unit(),
        visit_none()
    );

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_map(map)?;
        Ok(None)
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_enum(data)?;
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Value>()? {
            items.push((self.0)(items.len(), item));
        }
        Ok(Some(items))
    }
}
