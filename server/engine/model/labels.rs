//! Labels and label selectors of a slim object, sorted by key and packed: every key and value
//! in one string, with where each ends. An object carries a handful of labels; a `String` per
//! key and value (and a `BTreeMap` node, over 500 bytes, before that) cost more than the labels
//! themselves, and every tracked object has one or two of these.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// Key, value, key, value… concatenated, sorted by key.
    text: Box<str>,
    /// Where each key and value ends in `text`.
    ends: Box<[u32]>,
}

impl Labels {
    pub fn get(&self, key: &str) -> Option<&str> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = (low + high) / 2;
            match self.part(2 * middle).cmp(key) {
                Ordering::Less => low = middle + 1,
                Ordering::Greater => high = middle,
                Ordering::Equal => return Some(self.part(2 * middle + 1)),
            }
        }
        None
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        (0..self.len()).map(|i| (self.part(2 * i), self.part(2 * i + 1)))
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn len(&self) -> usize {
        self.ends.len() / 2
    }

    /// The `i`th key or value.
    fn part(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

impl FromIterator<(String, String)> for Labels {
    /// Sorted by key; the last value given for a key wins, as in a map.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        let map: BTreeMap<String, String> = pairs.into_iter().collect();
        let mut text = String::new();
        let mut ends = Vec::with_capacity(2 * map.len());
        for part in map.iter().flat_map(|(k, v)| [k, v]) {
            text.push_str(part);
            ends.push(u32::try_from(text.len()).expect("labels shorter than 4 GiB"));
        }
        Labels {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }
}

impl<const N: usize> From<[(String, String); N]> for Labels {
    fn from(pairs: [(String, String); N]) -> Self {
        pairs.into_iter().collect()
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Labels {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for Labels {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<String, String>::deserialize(deserializer).map(|map| map.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn looks_up_by_key_and_reads_and_writes_as_a_json_map() {
        let labels: Labels = [("b", "2"), ("a", "1"), ("b", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(labels.get("b"), Some("3"));
        assert_eq!(labels.get("a"), Some("1"));
        assert_eq!(labels.get("c"), None);
        assert_eq!(labels.iter().collect::<Vec<_>>(), [("a", "1"), ("b", "3")]);
        assert_eq!(format!("{labels:?}"), r#"{"a": "1", "b": "3"}"#);
        let value = serde_json::to_value(&labels).unwrap();
        assert_eq!(value, json!({"a": "1", "b": "3"}));
        assert_eq!(serde_json::from_value::<Labels>(value).unwrap(), labels);
    }

    #[test]
    fn empty_keys_and_values_keep_their_place() {
        let labels = Labels::from([
            ("z".to_string(), String::new()),
            (String::new(), "root".to_string()),
            ("m".to_string(), "x".to_string()),
        ]);
        assert_eq!(labels.get(""), Some("root"));
        assert_eq!(labels.get("m"), Some("x"));
        assert_eq!(labels.get("z"), Some(""));
        assert_eq!(labels.get("n"), None);
        assert!(Labels::default().is_empty());
        assert_eq!(Labels::default().get("m"), None);
    }
}
