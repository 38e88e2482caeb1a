//! Labels and label selectors of a slim object: a sorted vector. An object carries a handful
//! of labels; a `BTreeMap` node (over 500 bytes) would cost more than the labels themselves,
//! and every tracked object has one or two of these.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(Vec<(String, String)>);

impl Labels {
    pub fn get(&self, key: &str) -> Option<&String> {
        self.0
            .binary_search_by(|(k, _)| k.as_str().cmp(key))
            .ok()
            .map(|i| &self.0[i].1)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(String, String)> for Labels {
    /// Sorted by key; the last value given for a key wins, as in a map.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        let map: BTreeMap<String, String> = pairs.into_iter().collect();
        Labels(map.into_iter().collect())
    }
}

impl<const N: usize> From<[(String, String); N]> for Labels {
    fn from(pairs: [(String, String); N]) -> Self {
        pairs.into_iter().collect()
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
        assert_eq!(labels.get("b").map(String::as_str), Some("3"));
        assert_eq!(labels.get("a").map(String::as_str), Some("1"));
        assert_eq!(labels.get("c"), None);
        let value = serde_json::to_value(&labels).unwrap();
        assert_eq!(value, json!({"a": "1", "b": "3"}));
        assert_eq!(serde_json::from_value::<Labels>(value).unwrap(), labels);
    }
}
