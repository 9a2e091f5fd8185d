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
``modules``     nn.Module, the layers' options, nn.init
``optim``       the optimizers
``transforms``  func (jvp, vjp, jacrev, jacfwd) and checkpointing
``checks``      gradcheck and detect_anomaly
==============  ===========================================================

Why a package beside the ops rather than messages inside each ops module: one message
often serves several families (``broadcast`` is raised by add, where and expand;
``dim_out_of_range`` by every op that takes a dim), the ops modules stay a formula sheet
of forward and backward side by side, and a call site reads the same wherever the op
lives: ``raise errors.bad_reshape(shape, size)``. This package re-exports every
message, so ``from autograd_core import errors`` is the one import an engine module
needs. Widget messages (drawing, stepping, reading a learner's answer) live in
``widgets/messages.py``: the engine does not know about them.
"""

# Every import below is a re-export: the names are this package's public interface.
# ruff: noqa: F401

from ._text import error
from .backward import (
    CycleError,
    create_graph_case,
    create_graph_op,
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
    second_backward,
)
from .checks import GradcheckError, anomaly, gradcheck_dtype, gradcheck_mismatch, gradcheck_nothing
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
    layer_input_rank,
    layer_weight_length,
    linear_shapes,
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
from .operands import broadcast, clip_bounds, matmul_scalar, matmul_shapes, where_condition
from .optim import (
    bad_optimizer_option,
    duplicate_parameters,
    empty_parameters,
    nesterov_options,
    not_a_leaf_parameter,
    not_a_tensor_parameter,
    optimizer_state,
    parameter_in_two_groups,
    params_not_iterable,
)
from .shapes import (
    bad_reshape,
    cat_shapes,
    dim_out_of_range,
    empty_reduction,
    empty_sequence,
    new_dim_out_of_range,
    not_a_permutation,
    repeated_dim,
    split_sections,
    split_size,
    stack_shapes,
)
from .tensors import (
    ambiguous_bool,
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
    jacobian_mode,
    missing_jvp,
    non_float_primal,
    non_float_tangent,
    primals_tangents,
    tangent_shape,
)
