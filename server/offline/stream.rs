//! One document at a time, and a List's `items` one at a time as the parser reaches them,
//! each read straight into the fields the engine reads (everything else is skipped by the
//! parser, never built), so 100,000 objects cost about their slim objects.

use crate::model::{KeyInto, Object, RawObject, Skip, object_from_raw};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What one value of the input is: a List (its items, Lists inside Lists too) or an object,
/// each with where it was read (`file#index`, `file#index.items[i]`).
pub(super) type Parsed = Vec<(String, Result<Object, Skip>)>;

/// Reads one document (`item: false`; None when it is an empty YAML document) or one element
/// of a List's `items` (`item: true`).
pub(super) struct DocumentSeed<'a> {
    pub cluster: &'a str,
    pub document: &'a str,
    pub item: bool,
}

impl<'de> DeserializeSeed<'de> for DocumentSeed<'_> {
    type Value = Option<Parsed>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl DocumentSeed<'_> {
    fn not_a_mapping(&self) -> Option<Parsed> {
        Some(vec![(
            self.document.to_string(),
            Err(Skip::Invalid("not a mapping".into())),
        )])
    }
}

/// Anything but a mapping at the top: consumed and reported as such.
macro_rules! not_a_mapping {
    ($($method:ident($($arg:ty)?)),*) => {
        $(fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<Self::Value, E> {
            Ok(self.not_a_mapping())
        })*
    };
}

impl<'de> Visitor<'de> for DocumentSeed<'_> {
    type Value = Option<Parsed>;

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

    /// An empty YAML document; a null inside a List is an item that is not a mapping.
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(if self.item {
            self.not_a_mapping()
        } else {
            None
        })
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(self.not_a_mapping())
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        IgnoredAny.visit_enum(data)?;
        Ok(self.not_a_mapping())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut object = RawObject::default();
        let mut items = None;
        let mut key = String::new();
        while map.next_key_seed(KeyInto(&mut key))?.is_some() {
            if key == "items" {
                items = map.next_value_seed(ItemsSeed {
                    cluster: self.cluster,
                    document: self.document,
                })?;
            } else {
                object.read_field(&key, &mut map)?;
            }
        }
        let is_list = object.kind.got().is_some_and(|kind| kind.ends_with("List"));
        Ok(Some(match items {
            Some(items) if is_list => items.into_iter().flatten().collect(),
            _ => vec![(
                self.document.to_string(),
                object_from_raw(self.cluster, object),
            )],
        }))
    }
}

/// `items`: each element read as soon as the parser reaches it; None when `items` is not an
/// array.
struct ItemsSeed<'a> {
    cluster: &'a str,
    document: &'a str,
}

impl<'de> DeserializeSeed<'de> for ItemsSeed<'_> {
    type Value = Option<Vec<Parsed>>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

macro_rules! not_an_array {
    ($($method:ident($($arg:ty)?)),*) => {
        $(fn $method<E: de::Error>(self $(, _: $arg)?) -> Result<Self::Value, E> {
            Ok(None)
        })*
    };
}

impl<'de> Visitor<'de> for ItemsSeed<'_> {
    type Value = Option<Vec<Parsed>>;

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
        loop {
            let document = format!("{}.items[{}]", self.document, items.len());
            let item = DocumentSeed {
                cluster: self.cluster,
                document: &document,
                item: true,
            };
            match seq.next_element_seed(item)? {
                Some(parsed) => items.push(parsed.unwrap_or_default()),
                None => return Ok(Some(items)),
            }
        }
    }
}

/// A sequence of exactly one element read by the seed (a List's element cut out of its
/// `items`, `- ` and all); None when the sequence holds anything else.
pub(super) struct OneEntry<'a>(pub DocumentSeed<'a>);

impl<'de> DeserializeSeed<'de> for OneEntry<'_> {
    type Value = Option<Parsed>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for OneEntry<'_> {
    type Value = Option<Parsed>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a sequence of one")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Some(parsed) = seq.next_element_seed(self.0)? else {
            return Ok(None);
        };
        let more = seq.next_element::<IgnoredAny>()?.is_some();
        Ok(if more { None } else { parsed })
    }
}

/// One document read where no seed can be handed to it (a whole text's documents in one go):
/// its objects under no cluster, each with where it stands inside the document (`""`,
/// `".items[3]"`), for [`Anonymous::named`] to place.
pub(super) struct Anonymous(Option<Parsed>);

impl<'de> de::Deserialize<'de> for Anonymous {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let seed = DocumentSeed {
            cluster: "",
            document: "",
            item: false,
        };
        seed.deserialize(deserializer).map(Anonymous)
    }
}

impl Anonymous {
    /// The document as read from `document` on `cluster`; None when it held nothing.
    pub fn named(self, document: &str, cluster: &str) -> Option<Parsed> {
        let cluster = crate::model::shared(cluster);
        let parsed = self.0?;
        Some(
            parsed
                .into_iter()
                .map(|(inside, read)| {
                    let read = read.map(|mut object| {
                        object.cluster = cluster.clone();
                        object
                    });
                    (format!("{document}{inside}"), read)
                })
                .collect(),
        )
    }
}
