package io.kvguard.customresource;

/** Enforce gates traffic; Audit reports every verdict but opens every gate. */
public enum Enforcement {
  Enforce,
  Audit
}
