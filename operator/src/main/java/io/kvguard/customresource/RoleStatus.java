package io.kvguard.customresource;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Max;
import java.util.ArrayList;
import java.util.List;

@JsonInclude(JsonInclude.Include.NON_NULL)
public class RoleStatus {
  public String name;

  @Max(SchemaBounds.INT)
  public Integer selected;

  @Max(SchemaBounds.INT)
  public Integer verified;

  @Max(SchemaBounds.INT)
  public Integer minReadyPods;

  /**
   * Selected pods per verdict reason (e.g. PoolSufficient: 4990, PoolTooSmall: 10); absent while
   * none is selected.
   */
  public java.util.Map<String, @Max(SchemaBounds.INT) Integer> podsByReason;

  /**
   * Smallest KV pool, in tokens, measured on any pod of the role (absent until one was measured).
   */
  @Max(SchemaBounds.LONG)
  public Long smallestPoolTokens;

  /** Facts a platform engineer should know, e.g. an opt-out in force. */
  public List<String> notes = new ArrayList<>();
}
