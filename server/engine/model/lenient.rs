//! Lenient, selective deserialization: each field the engine reads holds the shape it should
//! (a string, an integer, a mapping…) or is marked wrong, so one malformed field never fails
//! the read; every other field is skipped by the parser without being built. Shapes are judged
//! as a `serde_json::Value` would see them (null is absent, an integer is one that fits `i64`).

use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use std::fmt;

/// A field as read: absent (or null), present with the wrong shape, or its value.
#[derive(Debug, Default)]
pub enum Field<T> {
    #[default]
    Absent,
    Wrong,
    Got(T),
}

impl<T> Field<T> {
    pub fn got(&self) -> Option<&T> {
        match self {
            Field::Got(value) => Some(value),
            _ => None,
        }
    }

    pub fn into_got(self) -> Option<T> {
        match self {
            Field::Got(value) => Some(value),
            _ => None,
        }
    }

    /// Present and not null, whatever its shape.
    pub fn is_present(&self) -> bool {
        !matches!(self, Field::Absent)
    }

    fn from(value: Option<T>) -> Self {
        value.map_or(Field::Wrong, Field::Got)
    }
}

/// What a field's value can be built from; any other shape makes the field [`Field::Wrong`]
/// (and is skipped).
pub trait Shape<'de>: Sized {
    fn from_bool(_: bool) -> Option<Self> {
        None
    }
    fn from_i64(_: i64) -> Option<Self> {
        None
    }
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    fn from_f64(_: f64) -> Option<Self> {
        None
    }
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    fn from_map<A: MapAccess<'de>>(map: A) -> Result<Option<Self>, A::Error> {
        IgnoredAny.visit_map(map)?;
        Ok(None)
    }
    fn from_seq<A: SeqAccess<'de>>(seq: A) -> Result<Option<Self>, A::Error> {
        IgnoredAny.visit_seq(seq)?;
        Ok(None)
    }
}

impl<'de, T: Shape<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FieldVisitor(std::marker::PhantomData))
    }
}

struct FieldVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: Shape<'de>> Visitor<'de> for FieldVisitor<T> {
    type Value = Field<T>;

    /// What a `serde_json::Value` expects, so values it cannot hold (YAML tags) fail the same.
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Field::Absent)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Field::from(T::from_bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Field::from(T::from_i64(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Field::from(T::from_u64(v)))
    }

    /// A JSON value holds no infinity or NaN (YAML `.inf`, `.nan`): they read as null.
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if !v.is_finite() {
            return Ok(Field::Absent);
        }
        Ok(Field::from(T::from_f64(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Field::from(T::from_str(v)))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        Ok(Field::from(T::from_map(map)?))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(Field::from(T::from_seq(seq)?))
    }
}

impl Shape<'_> for String {
    fn from_str(v: &str) -> Option<Self> {
        Some(v.to_string())
    }
}

impl Shape<'_> for bool {
    fn from_bool(v: bool) -> Option<Self> {
        Some(v)
    }
}

/// An integer that fits `i64` (`Value::as_i64`).
impl Shape<'_> for i64 {
    fn from_i64(v: i64) -> Option<Self> {
        Some(v)
    }
    fn from_u64(v: u64) -> Option<Self> {
        i64::try_from(v).ok()
    }
}

/// An integer, or a string holding one (`"3"`, as some tools write counts).
#[derive(Debug, Clone, Copy)]
pub struct Integer(pub i64);

impl Shape<'_> for Integer {
    fn from_i64(v: i64) -> Option<Self> {
        Some(Integer(v))
    }
    fn from_u64(v: u64) -> Option<Self> {
        i64::try_from(v).ok().map(Integer)
    }
    fn from_str(v: &str) -> Option<Self> {
        v.parse().ok().map(Integer)
    }
}

/// A list, every element read as `T`.
impl<'de, T: Deserialize<'de>> Shape<'de> for Vec<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// A list of which only the first element is read (the newest entry of a history).
#[derive(Debug, Default)]
pub struct First<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Shape<'de> for First<T> {
    fn from_seq<A: SeqAccess<'de>>(mut seq: A) -> Result<Option<Self>, A::Error> {
        let first = seq.next_element()?;
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Some(First(first)))
    }
}

/// A mapping's entries in order, every value read as `T` (duplicates kept: the reader decides).
#[derive(Debug, Default)]
pub struct Entries<T>(pub Vec<(String, T)>);

impl<'de, T: Deserialize<'de>> Shape<'de> for Entries<T> {
    fn from_map<A: MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
        let mut entries = Vec::new();
        let mut key = String::new();
        while map.next_key_seed(KeyInto(&mut key))?.is_some() {
            entries.push((key.clone(), map.next_value()?));
        }
        Ok(Some(Entries(entries)))
    }
}

/// Reads a mapping key into a reused buffer (no allocation per key).
pub struct KeyInto<'k>(pub &'k mut String);

impl<'de> DeserializeSeed<'de> for KeyInto<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyInto<'_> {
    type Value = ();

    /// As a `serde_json::Value` map says it.
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.0.clear();
        self.0.push_str(v);
        Ok(())
    }
}

/// A struct of lenient fields read from a mapping: `"key"` → field; other keys are skipped
/// unparsed, and a key given twice keeps its last value (as a JSON map does).
macro_rules! lenient_struct {
    ($(#[$meta:meta])* $name:ident { $($field:ident: $ty:ty = $key:literal),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        pub struct $name {
            $(pub $field: $ty,)*
        }

        impl $name {
            /// Reads the value under `key` into its field, or skips it.
            pub fn read_field<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<(), A::Error> {
                match key {
                    $($key => self.$field = map.next_value()?,)*
                    _ => {
                        map.next_value::<serde::de::IgnoredAny>()?;
                    }
                }
                Ok(())
            }
        }

        impl<'de> $crate::model::lenient::Shape<'de> for $name {
            fn from_map<A: serde::de::MapAccess<'de>>(mut map: A) -> Result<Option<Self>, A::Error> {
                let mut read = Self::default();
                let mut key = String::new();
                while map.next_key_seed($crate::model::lenient::KeyInto(&mut key))?.is_some() {
                    read.read_field(&key, &mut map)?;
                }
                Ok(Some(read))
            }
        }
    };
}

pub(crate) use lenient_struct;

#[cfg(test)]
mod tests {
    use super::*;

    /// serde-saphyr reads an application tag as the value it tags; a key that is not a
    /// string fails the document where it stands.
    #[test]
    fn yaml_tags_read_as_their_values_and_keys_must_be_strings() {
        let tagged = serde_saphyr::from_str::<Field<Vec<String>>>("!Ref x");
        assert!(matches!(tagged, Ok(Field::Wrong)), "{tagged:?}");
        let tagged = serde_saphyr::from_str::<Field<Vec<String>>>("!Ref [x]");
        assert!(
            matches!(&tagged, Ok(Field::Got(v)) if v == &["x"]),
            "{tagged:?}"
        );
        let keyed = serde_saphyr::from_str::<Field<Entries<String>>>("? [a, b]\n: c\n");
        let at = keyed
            .unwrap_err()
            .location()
            .map(|l| (l.line(), l.column()));
        assert_eq!(at, Some((1, 3)));
    }
}
