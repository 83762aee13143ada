package io.kvguard.customresource;

/**
 * Upper bounds the CRD puts on every list, map and string of the spec, and on every integer of spec
 * and status. A real API server estimates the worst-case cost of each x-kubernetes-validations rule
 * from these bounds and refuses the whole CRD when a rule could cost too much (issue 17;
 * docs/reference.md#bounds). Without a bound it assumes a list or string as large as a 3 MiB
 * request allows. Each bound is far above what a real deployment writes; CrdCelCostTest re-states
 * the estimate.
 */
final class SchemaBounds {
  /** Roles of one model: prefill, decode, serve and a few more; never dozens. */
  static final int ROLES = 32;

  /** A DNS label, which the name's pattern already requires. */
  static final int ROLE_NAME = 63;

  /** An IANA service name (a container port name), which the port's rule already requires. */
  static final int PORT_NAME = 15;

  /**
   * Model names as clients address them (e.g. zai-org/GLM-5.3; Hugging Face ids stay under 100).
   */
  static final int MODEL = 512;

  /** A release version such as 0.5.22 or v1.2.3.post1. */
  static final int VERSION = 64;

  /** An HTTP path on the engine. */
  static final int HTTP_PATH = 2048;

  /** An RFC 6901 pointer into a JSON answer. */
  static final int JSON_POINTER = 1024;

  /** A Prometheus metric name. */
  static final int METRIC_NAME = 256;

  /** Label matchers of one generic figure. */
  static final int METRIC_LABELS = 32;

  /** A Prometheus label value a matcher compares with. */
  static final int METRIC_LABEL_VALUE = 1024;

  /** A Secret name (DNS subdomain) and a key in it. */
  static final int SECRET_NAME = 253;

  static final int SECRET_KEY = 253;

  /** A ConfigMap name (DNS subdomain) and a key in it. */
  static final int CONFIG_MAP_NAME = 253;

  static final int CONFIG_MAP_KEY = 253;

  /** A DNS name a certificate is verified against. */
  static final int SERVER_NAME = 253;

  /** A Service name: a DNS-1035 label (Kubernetes ValidateServiceName). */
  static final int SERVICE_NAME = 63;

  /**
   * A role's label selector: as many labels and expressions as a pod could ever carry in practice.
   */
  static final int SELECTOR_LABELS = 64;

  static final int SELECTOR_EXPRESSIONS = 64;
  static final int SELECTOR_VALUES = 256;

  /** A qualified label key: a DNS subdomain prefix (253), a slash and a name (63). */
  static final int LABEL_KEY = 317;

  /** A label value (Kubernetes refuses longer ones on pods, so a longer one could never match). */
  static final int LABEL_VALUE = 63;

  /** In, NotIn, Exists, DoesNotExist. */
  static final int SELECTOR_OPERATOR = 16;

  /**
   * Integers of the spec and status held in a Java Integer: what an int holds. A larger stored
   * value could not be read at all (issue 29: one such object stopped the operator).
   */
  static final int INT = Integer.MAX_VALUE;

  /**
   * Verified pods a role may require: a million, several times the pods the largest clusters run
   * (Kubernetes is tested to 150,000 pods per cluster).
   */
  static final int MIN_READY_PODS = 1_000_000;

  /**
   * Token counts and multipliers of the spec: 2^53 - 1, the largest integer a double holds exactly
   * (kvguard multiplies the window by minPoolRatio as doubles; JSON tools read no larger integer
   * exactly).
   */
  static final long TOKENS = 9_007_199_254_740_991L;

  /**
   * Long integers of the status, which kvguard writes from engine answers: the largest double below
   * 2^63 (9223372036854774784; a CRD's maximum is a floating-point number), so every value a Java
   * long holds up to it is admitted and none beyond what a long holds.
   */
  static final double LONG = 9.223372036854775E18;

  /**
   * minPoolRatio: a pool a thousand times the window is already absurd; without a bound a ratio of
   * 1e308 makes window x ratio infinite (issue 29 review).
   */
  static final double POOL_RATIO = 1000;

  private SchemaBounds() {}
}
