CREATE TABLE IF NOT EXISTS test_backend_ops (
  test_time TEXT,
  build_commit TEXT,
  backend_name TEXT,
  op_name TEXT,
  op_params TEXT,
  test_mode TEXT,
  supported INTEGER,
  passed INTEGER,
  error_message TEXT,
  time_us REAL,
  flops REAL,
  bandwidth_gb_s REAL,
  memory_kb INTEGER,
  n_runs INTEGER,
  device_description TEXT,
  backend_reg_name TEXT
);

INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:01:02Z', '8cf427ff', 'MTL0', 'GLM_FFN_CONSUMER', 'routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type=q3_K,shexp_gate_type=q4_K,shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,n_embd=6144,n_ff=2048,fused_glu=1,weighted_down=0,merged_shexp_gate_up=0', 'perf', '1', '1', '', '1147.210000', '201540000000.000000', '0.000000', '0', '872', 'Apple M3 Max', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:01:03Z', '8cf427ff', 'MTL0', 'GLM_FFN_CONSUMER', 'routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type=q2_K,shexp_gate_type=q4_K,shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,n_embd=6144,n_ff=2048,fused_glu=1,weighted_down=0,merged_shexp_gate_up=0', 'perf', '1', '1', '', '817.380000', '277100000000.000000', '0.000000', '0', '1224', 'Apple M3 Max', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:01:04Z', '8cf427ff', 'MTL0', 'GLM_FFN_CONSUMER', 'routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type=q3_K,shexp_gate_type=q4_K,shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,n_embd=6144,n_ff=2048,fused_glu=1,weighted_down=0,merged_shexp_gate_up=1', 'perf', '1', '1', '', '868.590000', '266190000000.000000', '0.000000', '0', '1152', 'Apple M3 Max', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:01:05Z', '8cf427ff', 'MTL0', 'GLM_SHEXP_CONSUMER', 'gate_type=q2_K,up_type=q2_K,down_type=q2_K,n_embd=6144,n_ff=2048,n_tokens=1,fused_glu=1,merged_gate_up=0', 'perf', '0', '0', '', '0.000000', '0.000000', '0.000000', '0', '0', 'Apple M3 Max', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:02:00Z', '8cf427ff', 'MTL0', 'GLM_FFN_CONSUMER', 'routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type=q2_K,shexp_gate_type=q4_K,shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,n_embd=6144,n_ff=2048,fused_glu=1,weighted_down=0,merged_shexp_gate_up=0', 'test', '1', '1', '', '0.000000', '0.000000', '0.000000', '0', '0', 'Apple M3 Max', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:02:01Z', '8cf427ff', 'MTL0', 'GLM_FFN_CONSUMER', 'routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type=q2_K,shexp_gate_type=q4_K,shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,n_embd=6144,n_ff=2048,fused_glu=1,weighted_down=1,merged_shexp_gate_up=0', 'test', '1', '0', 'NMSE above threshold', '0.000000', '0.000000', '0.000000', '0', '0', 'Apple M3 Max', 'Metal');
INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs, device_description, backend_reg_name) VALUES ('2025-11-20T10:02:02Z', '8cf427ff', 'MTL0', 'MUL_MAT_ID', 'type_a=q3_K,type_b=f32,n_mats=256,n_used=8,b=0,m=6144,n=1,k=2048', 'test', '0', '0', 'not supported', '0.000000', '0.000000', '0.000000', '0', '0', 'Apple M3 Max', 'Metal');
