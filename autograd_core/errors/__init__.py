"""Every error message the engine raises, one module per op family.

Messages follow PyTorch's wording where PyTorch has the same error (so a search for
the message finds useful answers), name the op and the shapes involved, and end with
one ``Hint:`` line that says how to fix it: ``error(kind, message, hint)`` adds it, and
the widgets build their own messages with it too.

==============  ===========================================================
family          messages of
==============  ===========================================================
``tensors``     making a Tensor and using one: data, requires_grad, in-place,
                bool/len/item/index
``backward``    the reverse sweep: starting it, saved tensors, version checks,
                graph cycles
``operands``    operands that do not fit: broadcasting, where, matmul, clip
``shapes``      dims, reshape, permute, cat/stack/split
``functional``  nn.functional: convolution, pooling, normalisation, dropout,
                embedding, linear, losses
``activation``  gelu, silu, softplus, leaky_relu: their arguments and dtypes
``attention``   scaled_dot_product_attention, MultiheadAttention
``masking``     masked_fill, tril/triu, cumsum, flip, pad, gather, scatter_add
``einsum``      einsum: its equation and operands
``linalg``      det, inv, solve, slogdet and trace: shapes, dtypes, a singular
                matrix
``norms``       layer_norm, rms_norm: normalized_shape, weight and bias shapes, eps
``modules``     nn.Module, the layers' options, nn.init
``optim``       the optimizers
``transforms``  func (jvp, vjp, jacrev, jacfwd) and checkpointing
``checks``      gradcheck and detect_anomaly
``porting``     devices, .to, sort/topk/roll/multinomial, containers, clip_grad_norm_,
                save/load: what a model file ported from PyTorch touches
==============  ===========================================================

Why a package beside the ops rather than messages inside each ops module: one message
often serves several families (``broadcast`` is raised by add, where and expand;
``dim_out_of_range`` by every op that takes a dim), the ops modules stay a formula sheet
of forward and backward side by side, and a call site reads the same wherever the op
lives: ``raise errors.bad_reshape(shape, size)``. This package re-exports every
message, so ``from autograd_core import errors`` is the one import an engine module
needs. To go from a sentence to what raises it, each family's docstring ends with the
files that raise its sentences (``Raised from: ...``), kept true by
``tests/engine/test_error_index.py``; within a file, ``errors.<name>(`` finds the line.
Widget messages (drawing, stepping, reading a learner's answer) live in
``widgets/messages.py``: the engine does not know about them.
"""

# Every import below is a re-export: the names are this package's public interface.
# ruff: noqa: F401

from ._text import error
from .activation import (
    gelu_approximate,
    gelu_approximate_type,
    inplace_activation,
    not_a_number,
    not_floating,
)
from .attention import (
    gqa_heads,
    gqa_rank,
    mha_attn_mask_shape,
    mha_batch_sizes,
    mha_causal_needs_mask,
    mha_embed_dim,
    mha_key_padding_mask_shape,
    mha_key_value_shapes,
    mha_mask_dtype,
    mha_not_divisible,
    mha_not_implemented,
    mha_query_rank,
    mha_rank,
    mha_sizes,
    mha_unbatched_attn_mask_shape,
    sdpa_argument_type,
    sdpa_dropout_probability,
    sdpa_dtypes,
    sdpa_feature_sizes,
    sdpa_mask_and_causal,
    sdpa_mask_dtype,
    sdpa_mask_grows,
    sdpa_not_floating,
    sdpa_rank,
    sdpa_sequence_sizes,
    sequence_input_rank,
)
from .backward import (
    CycleError,
    grad_count,
    grad_input_not_requiring,
    grad_input_unused,
    grad_no_inputs,
    grad_output_shape,
    gradient_shape,
    graph_cycle,
    hook_changed,
    hook_returned,
    implicit_grad,
    missing_backward,
    modified_inplace,
    no_grad_fn,
    not_saved,
    rule_not_code,
    rule_unknown_name,
    second_backward,
)
from .checks import GradcheckError, anomaly, gradcheck_dtype, gradcheck_mismatch, gradcheck_nothing
from .einsum import (
    einsum_ellipsis,
    einsum_ellipsis_size,
    einsum_equation_type,
    einsum_letters,
    einsum_no_operands,
    einsum_operand_count,
    einsum_operand_type,
    einsum_output_subscript,
    einsum_repeated_size,
    einsum_size,
    einsum_subscript,
    einsum_subscript_count,
)
from .functional import (
    bad_reduction,
    batch_norm_no_running_stats,
    batch_norm_single_value,
    class_input_rank,
    class_target_dtype,
    class_target_range,
    class_target_shape,
    conv_bias,
    conv_channels,
    conv_groups,
    conv_weight_rank,
    dropout_probability,
    embedding_index_range,
    embedding_indices_dtype,
    embedding_weight_rank,
    kernel_too_large,
    label_smoothing_range,
    layer_input_rank,
    layer_weight_length,
    linear_shapes,
    loss_option_type,
    loss_target_shape,
    negative_padding,
    not_positive,
    padding_string,
    pair_argument,
    pair_length,
    pool_padding,
    same_padding_strided,
    target_batch_size,
)
from .linalg import (
    linalg_dtype,
    linalg_dtypes_differ,
    linalg_not_square,
    linalg_too_few_dims,
    singular,
    solve_shapes,
    trace_not_matrix,
)
from .masking import (
    fill_value_dims,
    fill_value_overflow,
    fill_value_type,
    flip_no_dims,
    gather_index_size,
    index_dtype,
    index_out_of_bounds,
    index_rank,
    int_argument,
    int_tuple_argument,
    mask_dtype,
    not_a_tensor_argument,
    pad_crops_too_much,
    pad_mode,
    pad_odd_length,
    pad_too_long,
    repeated_flip_dim,
    scatter_index_size,
    src_dtype,
    triangle_rank,
)
from .modules import (
    bad_member_name,
    bad_option,
    fan_needs_matrix,
    init_not_called,
    missing_attribute,
    no_forward,
    not_a_buffer,
    not_a_child_module,
    not_a_module,
    not_a_parameter,
    sequential_index,
    sequential_index_type,
    state_dict_keys,
    state_dict_shape,
    training_mode,
    unknown_nonlinearity,
)
from .norms import (
    norm_affine_shape,
    norm_eps_type,
    norm_module_shape,
    normalized_shape_empty,
    normalized_shape_mismatch,
    normalized_shape_type,
    rms_norm_rank,
)
from .operands import (
    broadcast,
    clip_bounds,
    matmul_scalar,
    matmul_shapes,
    tensor_sequence_operand,
    where_condition,
)
from .optim import (
    bad_optimizer_option,
    cosine_T_max,
    duplicate_parameters,
    empty_parameters,
    get_lr_outside_step,
    linear_factor,
    lr_lambda_count,
    missing_initial_lr,
    nesterov_options,
    not_a_leaf_parameter,
    not_a_tensor_parameter,
    not_an_optimizer,
    not_callable,
    optimizer_state,
    parameter_in_two_groups,
    params_not_iterable,
    scheduler_before_optimizer,
    sequential_not_a_scheduler,
    sequential_schedulers,
    step_size,
    warmup_schedule,
)
from .porting import (
    adaptive_pool_input,
    adaptive_pool_size,
    bad_norm_type,
    bad_to_arguments,
    container_entry,
    container_index,
    container_index_type,
    cpu_only,
    damaged_file,
    data_not_a_tensor,
    from_numpy_type,
    grad_mode_argument,
    init_mode,
    inplace_result_type,
    loss_class_weights,
    module_dict_key,
    multinomial_input,
    multinomial_samples,
    nonfinite_norm,
    not_a_device,
    randint_arguments,
    rnn_input,
    rnn_option,
    roll_arguments,
    save_entry,
    save_object,
    t_dims,
    topk_k,
)
from .shapes import (
    bad_reshape,
    cat_shapes,
    dim_out_of_range,
    empty_reduction,
    empty_sequence,
    new_dim_out_of_range,
    no_dims,
    not_a_permutation,
    repeated_dim,
    split_sections,
    split_size,
    stack_shapes,
)
from .tensors import (
    ambiguous_bool,
    default_dtype,
    hook_needs_grad,
    inplace_leaf,
    inplace_recorded,
    inplace_view,
    item_of_many,
    len_of_scalar,
    non_float_grad,
    non_leaf_requires_grad,
    not_a_tensor,
    not_an_index,
    ragged,
    unsupported_data,
)
from .transforms import (
    argnums_range,
    checkpoint_forward_mode,
    checkpoint_generator,
    checkpoint_no_grad,
    checkpoint_output,
    checkpoint_segments,
    cotangent_shape,
    function_output,
    has_aux,
    hvp_not_scalar,
    missing_jvp,
    non_float_primal,
    non_float_tangent,
    primals_tangents,
    tangent_shape,
)
