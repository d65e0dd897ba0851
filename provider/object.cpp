#include "object.hpp"

#include "provider.hpp"

namespace softndk::provider {

Object::~Object() = default;

void Object::release() {
    if (holds_.fetch_sub(1, std::memory_order_acq_rel) == 1) on_last_release();
}

void Object::on_last_release() {
    adapter_->defer([this] { finalize(false); });
}

void Object::depend_on(Object *other) {
    other->hold();
    depends_.push_back(other);
}

NTSTATUS Object::close(NDK_FN_CLOSE_COMPLETION completion, void *context) {
    if (completion == nullptr) return STATUS_INVALID_PARAMETER;
    bool expected = false;
    if (!closing_.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        log().error("{}: closed twice", name_);
        return STATUS_INVALID_DEVICE_STATE;
    }
    close_completion_ = completion;
    close_context_ = context;
    on_close();
    if (holds_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        finalize(true);
        return STATUS_SUCCESS;
    }
    log().debug("{}: close pends", name_);
    return STATUS_PENDING;
}

void Object::finalize(bool inline_close) {
    on_final();
    if (!inline_close) {
        log().debug("{}: close completes", name_);
        close_completion_(close_context_);
    }
    std::vector<Object *> depends = std::move(depends_);
    delete this;
    for (Object *o : depends)
        o->release();
}

}  // namespace softndk::provider
