package io.kvguard.customresource;

/** Whether kvguard's built-in engine advisories (known-unsafe engine builds) refuse pods. */
public enum AdvisoryMode {
  Enabled,
  Disabled
}
