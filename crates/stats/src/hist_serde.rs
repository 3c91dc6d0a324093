//! The stored form of a [`LatHist`]: a list of `[bin index, count]` pairs
//! for the non-empty bins, in ascending bin order, instead of 1856 mostly
//! zero counts. Decoding refuses a bin index past the layout and adds the
//! counts of a bin named twice, so any list it accepts is a histogram.

use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::{LatHist, PLAT_NR};

impl Serialize for LatHist {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let nonzero = self.bins().iter().filter(|&&c| c != 0).count();
        let mut seq = serializer.serialize_seq(Some(nonzero))?;
        for (idx, &count) in self.bins().iter().enumerate() {
            if count != 0 {
                seq.serialize_element(&(idx as u32, count))?;
            }
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for LatHist {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(PairsVisitor)
    }
}

struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = LatHist;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a list of [bin index, count] pairs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LatHist, A::Error> {
        let mut hist = LatHist::new();
        while let Some((idx, count)) = seq.next_element::<(u64, u64)>()? {
            let slot = usize::try_from(idx)
                .ok()
                .filter(|&i| i < PLAT_NR)
                .ok_or_else(|| {
                    de::Error::custom(format!(
                        "histogram bin {idx} out of range (the layout has {PLAT_NR} bins)"
                    ))
                })?;
            let bin = &mut hist.bins_mut()[slot];
            *bin = bin
                .checked_add(count)
                .ok_or_else(|| de::Error::custom(format!("histogram bin {idx} overflows")))?;
        }
        Ok(hist)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_as_sparse_pairs() {
        let mut h = LatHist::new();
        h.record_n(5, 3);
        h.record(1_000_000);
        let json = serde_json::to_string(&h).unwrap();
        let idx = LatHist::value_to_index(1_000_000);
        assert_eq!(json, format!("[[5,3],[{idx},1]]"));
        let back: LatHist = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn empty_histogram_is_an_empty_list() {
        let json = serde_json::to_string(&LatHist::new()).unwrap();
        assert_eq!(json, "[]");
        let back: LatHist = serde_json::from_str(&json).unwrap();
        assert!(back.is_empty());
    }

    #[test]
    fn out_of_range_bin_is_refused() {
        let err = serde_json::from_str::<LatHist>(&format!("[[{PLAT_NR},1]]")).unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
        assert!(serde_json::from_str::<LatHist>("[[1]]").is_err());
        assert!(serde_json::from_str::<LatHist>("{}").is_err());
    }

    #[test]
    fn repeated_bins_add_and_overflow_is_refused() {
        let h: LatHist = serde_json::from_str("[[7,2],[7,5]]").unwrap();
        assert_eq!(h.bins()[7], 7);
        let big = u64::MAX;
        assert!(serde_json::from_str::<LatHist>(&format!("[[7,{big}],[7,1]]")).is_err());
    }
}
