// commands.cpp - the slow path: one handler per CommandOpcode, dispatched from a
// table (request size, response size, handler). Contracts: device.hpp.
#include <algorithm>
#include <bit>
#include <cstring>

#include "cm/cm.hpp"
#include "device/device.hpp"
#include "device/log.hpp"
#include "device/status.hpp"
#include "rc/engine.hpp"

namespace softndk::emu {

namespace {

int32_t key_status_to_nt(KeyStatus s) {
    switch (s) {
        case KeyStatus::kOk:
            return status::kSuccess;
        case KeyStatus::kTableFull:
            return status::kInsufficientResources;
        case KeyStatus::kBoundWindows:
        case KeyStatus::kAlreadyValid:
        case KeyStatus::kNotValid:
            return status::kInvalidDeviceState;
        default:
            return status::kInvalidParameter;
    }
}

// Queue memory: the doorbell records share the first page, rings start on the next.
constexpr uint32_t kRingStart = hw::kPageBytes;

}  // namespace

struct Commands {
    using Handler = int32_t (*)(Device &, uint32_t &, const std::byte *, std::byte *, size_t);
    struct Spec {
        hw::CommandOpcode op;
        uint32_t request_bytes;
        Handler handler;
    };

    template <class Req, class Resp, int32_t (*Fn)(Device &, uint32_t &, const Req &, Resp &)>
    static int32_t invoke(Device &d, uint32_t &ctx, const std::byte *rq, std::byte *rs,
                          size_t rs_bytes) {
        Req req;
        std::memcpy(&req, rq, sizeof(Req));
        Resp resp{};
        resp.header.sequence = req.header.sequence;
        resp.header.status = Fn(d, ctx, req, resp);
        std::memcpy(rs, &resp, std::min(rs_bytes, sizeof(Resp)));
        return resp.header.status;
    }

    static const Spec *find(hw::CommandOpcode op);

    // Quotas hold per consumer PROCESS (ConsumerQuota, device.hpp): `count` of every
    // context with the same process id as `c` (the daemon's sessions of one peer
    // process; only `c` itself when its process id is 0, unknown). objects_mutex_ held.
    template <class Count>
    static size_t held_by_process(const Device &d, const Device::Context &c, Count &&count) {
        if (c.process_id == 0) return count(c);
        size_t held = 0;
        for (const auto &[id, other] : d.contexts_) {
            if (other->process_id == c.process_id) held += count(*other);
        }
        return held;
    }
    // True if the consumer process of `c` already holds `limit` objects of kind `member`
    // (checked before the queue memory is allocated, and again under the table lock
    // before the insert). at_quota_locked: objects_mutex_ held; over_quota takes it.
    static bool at_quota_locked(const Device &d, const Device::Context &c,
                                std::set<uint32_t> Device::Context::*member, uint32_t limit) {
        if (limit == ConsumerQuota::kUnlimited) return false;
        return held_by_process(d, c, [member](const Device::Context &x) {
                   return (x.*member).size();
               }) >= limit;
    }
    static bool over_quota(Device &d, const Device::Context &c,
                           std::set<uint32_t> Device::Context::*member, uint32_t limit) {
        std::shared_lock lock(d.objects_mutex_);
        return at_quota_locked(d, c, member, limit);
    }
    // MPT entries that are MRs (privileged keys included), or windows, against their
    // quota. objects_mutex_ held.
    static bool keys_at_quota_locked(const Device &d, const Device::Context &c, bool windows) {
        const uint32_t limit = windows ? d.config_.quota.mws : d.config_.quota.mrs;
        if (limit == ConsumerQuota::kUnlimited) return false;
        return held_by_process(d, c, [windows](const Device::Context &x) {
                   return windows ? x.mws.size() : x.mrs.size() - x.mws.size();
               }) >= limit;
    }

    // ---- contexts
    static int32_t attach(Device &d, uint32_t &ctx, const hw::AttachRequest &rq,
                          hw::AttachResponse &rs) {
        if (ctx != kNoContext) return status::kInvalidDeviceState;
        if (rq.abi_version != hw::kAbiVersion) return status::kBadVersion;
        if (rq.if_index != d.config_.if_index) return status::kInvalidParameter;
        const auto &l = d.limits();
        if (rq.ndk_major > l.ndk_version_major ||
            (rq.ndk_major == l.ndk_version_major && rq.ndk_minor > l.ndk_version_minor)) {
            return status::kBadVersion;
        }
        auto c = std::make_shared<Device::Context>();
        c->process_id = rq.process_id;
        c->control = d.allocator_->allocate(hw::kControlPageBytes);
        auto eq_memory = d.allocator_->allocate(Eq::layout_for(Eq::kEntries).bytes);
        if (!c->control || !eq_memory) return status::kInsufficientResources;
        c->page = new (c->control->data()) hw::ContextControlPage{};
        c->eq =
            std::make_shared<Eq>(std::move(eq_memory), c->page->wake.host_sleeping, d.counters_);
        {
            std::unique_lock lock(d.objects_mutex_);
            c->id = d.next_context_++;
            d.contexts_.emplace(c->id, c);
        }
        c->page->magic = hw::kControlPageMagic;
        c->page->abi_version = hw::kAbiVersion;
        c->page->context_id = c->id;
        ctx = c->id;
        rs.context_id = c->id;
        rs.abi_version = hw::kAbiVersion;
        rs.limits = l;
        rs.control_page = c->control->handle();
        rs.event_queue = c->eq->memory().handle();
        rs.event_queue_layout = c->eq->layout();
        logger(Component::kDevice)
            .debug("{}: ctx#{} attached (pid {})", d.config_.alias, c->id, rq.process_id);
        return status::kSuccess;
    }

    static int32_t detach(Device &d, uint32_t &ctx, const hw::ObjectRequest &,
                          hw::ObjectResponse &) {
        auto c = d.find_context(ctx);
        if (!c) return status::kInvalidParameter;
        d.destroy_context(*c);
        ctx = kNoContext;
        return status::kSuccess;
    }

    // ---- PDs
    // PD `pd` if context `ctx` owns it, else nullptr. objects_mutex_ held.
    static Device::Pd *owned_pd(Device &d, uint32_t ctx, uint32_t pd) {
        auto it = d.pds_.find(pd);
        return it == d.pds_.end() || it->second.context != ctx ? nullptr : &it->second;
    }

    static int32_t create_pd(Device &d, uint32_t &ctx, const hw::ObjectRequest &,
                             hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        if (!c) return status::kInvalidParameter;
        std::unique_lock lock(d.objects_mutex_);
        if (at_quota_locked(d, *c, &Device::Context::pds, d.config_.quota.pds)) {
            return status::kInsufficientResources;
        }
        const uint32_t pd = d.next_pd_++;
        d.pds_.emplace(pd, Device::Pd{ctx, 0});
        c->pds.insert(pd);
        rs.object = pd;
        return status::kSuccess;
    }

    static int32_t destroy_pd(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                              hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        std::unique_lock lock(d.objects_mutex_);
        Device::Pd *pd = owned_pd(d, ctx, rq.object);
        if (!c || pd == nullptr) return status::kInvalidParameter;
        if (pd->users != 0) return status::kInvalidDeviceState;
        if (const uint32_t privileged = pd->privileged; privileged != 0) {
            if (auto info = d.mpt_.inspect(privileged)) d.mpt_.deallocate(info->token);
            d.mpt_owners_.erase(privileged);
            c->mrs.erase(privileged);
        }
        d.pds_.erase(rq.object);
        c->pds.erase(rq.object);
        rs.object = rq.object;
        return status::kSuccess;
    }

    // ---- CQs
    static int32_t create_cq(Device &d, uint32_t &ctx, const hw::CreateCqRequest &rq,
                             hw::CreateCqResponse &rs) {
        auto c = d.find_context(ctx);
        if (!c) return status::kInvalidParameter;
        if (rq.depth == 0 || rq.depth > d.limits().max_cq_depth) return status::kInvalidParameter;
        if (over_quota(d, *c, &Device::Context::cqs, d.config_.quota.cqs)) {
            return status::kInsufficientResources;
        }
        const uint32_t entries = std::bit_ceil(rq.depth);
        auto memory = d.allocator_->allocate(Cq::layout_for(entries).bytes);
        if (!memory) return status::kInsufficientResources;
        std::unique_lock lock(d.objects_mutex_);
        if (at_quota_locked(d, *c, &Device::Context::cqs, d.config_.quota.cqs)) {
            return status::kInsufficientResources;
        }
        if (d.free_cqs_.empty()) return status::kInsufficientResources;
        const uint32_t n = d.free_cqs_.top();
        auto cq = std::make_shared<Cq>(n, ctx, std::move(memory), entries, c->eq, d.counters_, d);
        d.free_cqs_.pop();
        d.cqs_[n] = cq;
        c->cqs.insert(n);
        rs.cq = n;
        rs.memory = cq->memory().handle();
        rs.layout = cq->layout();
        return status::kSuccess;
    }

    static int32_t destroy_cq(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                              hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        std::unique_lock lock(d.objects_mutex_);
        if (!c || rq.object >= kMaxQueues || !d.cqs_[rq.object] ||
            d.cqs_[rq.object]->context() != ctx) {
            return status::kInvalidParameter;
        }
        for (const auto &qp : d.qps_) {
            if (qp && (qp->send_cq == d.cqs_[rq.object] || qp->recv_cq == d.cqs_[rq.object])) {
                return status::kInvalidDeviceState;
            }
        }
        d.cqs_[rq.object].reset();
        d.free_cqs_.push(rq.object);
        c->cqs.erase(rq.object);
        rs.object = rq.object;
        return status::kSuccess;
    }

    static std::shared_ptr<Cq> owned_cq(Device &d, uint32_t ctx, uint32_t n) {
        std::shared_lock lock(d.objects_mutex_);
        if (n >= kMaxQueues || !d.cqs_[n] || d.cqs_[n]->context() != ctx) return nullptr;
        return d.cqs_[n];
    }

    // New ring, queued CQEs carried over at the same counts (cq.hpp, "Resize").
    static int32_t resize_cq(Device &d, uint32_t &ctx, const hw::CreateCqRequest &rq,
                             hw::CreateCqResponse &rs) {
        auto cq = owned_cq(d, ctx, rq.cq);
        if (!cq) return status::kInvalidParameter;
        if (rq.depth == 0 || rq.depth > d.limits().max_cq_depth) return status::kInvalidParameter;
        const uint32_t entries = std::bit_ceil(rq.depth);
        auto memory = d.allocator_->allocate(Cq::layout_for(entries).bytes);
        if (!memory) return status::kInsufficientResources;
        const int32_t s =
            cq->resize(std::move(memory), entries, rq.depth, d.clock_.now(), rs.memory, rs.layout);
        if (s == status::kSuccess) rs.cq = rq.cq;
        return s;
    }

    // Any count and interval are acceptable (cq.hpp, "Moderation"); 0/0 turns it off.
    static int32_t moderate_cq(Device &d, uint32_t &ctx, const hw::ModerateCqRequest &rq,
                               hw::ObjectResponse &rs) {
        auto cq = owned_cq(d, ctx, rq.cq);
        if (!cq) return status::kInvalidParameter;
        cq->moderate(rq.count, rq.interval_us, d.clock_.now());
        rs.object = rq.cq;
        return status::kSuccess;
    }

    // ---- QPs
    static int32_t create_qp(Device &d, uint32_t &ctx, const hw::CreateQpRequest &rq,
                             hw::CreateQpResponse &rs) {
        auto c = d.find_context(ctx);
        if (!c) return status::kInvalidParameter;
        const auto &l = d.limits();
        const bool with_srq = rq.srq != hw::kNoObject;
        if (rq.send_depth == 0 || rq.send_depth > l.max_send_queue_depth ||
            (!with_srq &&
             (rq.recv_depth > l.max_recv_queue_depth || rq.max_recv_sge > l.max_recv_sge)) ||
            rq.max_send_sge > l.max_send_sge || rq.max_inline_bytes > l.max_inline_bytes) {
            return status::kInvalidParameter;
        }
        // Largest WQE: ctrl + raddr + max(data segments, inline segments).
        const uint32_t inline_segments = (4 + rq.max_inline_bytes + 15) / 16;
        const uint32_t data_segments = std::max(
            {rq.max_send_sge, std::min(rq.max_send_sge, l.max_read_sge), inline_segments, 1u});
        const uint32_t segments = 2 + data_segments;
        const uint32_t wqebbs =
            (segments * hw::kSegmentBytes + hw::kWqeBasicBlock - 1) / hw::kWqeBasicBlock;
        const uint32_t sq_entries = std::bit_ceil(rq.send_depth * wqebbs);
        // With an SRQ the QP has no RQ (layout entries 0, no ring memory).
        const uint32_t rq_entries = with_srq ? 0 : std::bit_ceil(std::max(rq.recv_depth, 1u));
        const uint32_t rq_entry_bytes =
            with_srq ? 0 : std::max(rq.max_recv_sge, 1u) * hw::kSegmentBytes;
        const uint64_t sq_bytes = uint64_t{sq_entries} * hw::kWqeBasicBlock;
        const uint64_t rq_offset = kRingStart + sq_bytes;
        const uint64_t total = rq_offset + round_up(uint64_t{rq_entries} * rq_entry_bytes, 64);
        if (over_quota(d, *c, &Device::Context::qps, d.config_.quota.qps)) {
            return status::kInsufficientResources;
        }
        auto memory = d.allocator_->allocate(total);
        if (!memory) return status::kInsufficientResources;

        std::shared_ptr<Qp> qp;
        {
            std::unique_lock lock(d.objects_mutex_);
            if (at_quota_locked(d, *c, &Device::Context::qps, d.config_.quota.qps)) {
                return status::kInsufficientResources;
            }
            Device::Pd *pd = owned_pd(d, ctx, rq.pd);
            auto cq_ok = [&](uint32_t n) {
                return n < kMaxQueues && d.cqs_[n] &&
                       d.same_consumer_locked(d.cqs_[n]->context(), ctx);
            };
            if (pd == nullptr || !cq_ok(rq.send_cq) || !cq_ok(rq.recv_cq)) {
                return status::kInvalidParameter;
            }
            std::shared_ptr<Srq> srq;
            if (with_srq) {
                if (rq.srq >= kMaxQueues || !d.srqs_[rq.srq] ||
                    !d.same_consumer_locked(d.srqs_[rq.srq]->context, ctx)) {
                    return status::kInvalidParameter;
                }
                srq = d.srqs_[rq.srq];
            }
            // The number freed longest ago (Device::free_qps_): not reused at once.
            if (d.free_qps_.empty()) return status::kInsufficientResources;
            const uint32_t n = d.free_qps_.front();
            qp = std::make_shared<Qp>(d, n, ctx, rq.pd);
            qp->send_cq = d.cqs_[rq.send_cq];
            qp->recv_cq = d.cqs_[rq.recv_cq];
            qp->srq = srq;
            qp->memory = std::move(memory);
            qp->sq_layout =
                hw::QueueLayout{qp->memory->size(), 0, kRingStart, sq_entries, hw::kWqeBasicBlock};
            qp->rq_layout =
                hw::QueueLayout{qp->memory->size(), sizeof(hw::QueueDoorbell),
                                static_cast<uint32_t>(rq_offset), rq_entries, rq_entry_bytes};
            qp->max_send_sge = rq.max_send_sge;
            qp->max_recv_sge = std::max(rq.max_recv_sge, 1u);
            qp->max_inline = rq.max_inline_bytes;
            // FAST_REGISTER: ctrl + 2 + one segment per two page addresses.
            const uint32_t fast_register_segments = 3 + (l.max_fast_register_pages + 1) / 2;
            qp->max_send_segments =
                std::min(std::max(segments, fast_register_segments), hw::kMaxWqeSegments);
            qp->req.sq = SqConsumer::attach(qp->memory->data(), qp->sq_layout);
            if (!with_srq) qp->resp.rq = RqConsumer::attach(qp->memory->data(), qp->rq_layout);
            if (!qp->req.sq || (!with_srq && !qp->resp.rq)) return status::kInternalError;
            d.free_qps_.pop_front();
            d.qps_[n] = qp;
            ++pd->users;
            c->qps.insert(n);
        }
        rs.qp = qp->number;
        rs.memory = qp->memory->handle();
        rs.send_queue = qp->sq_layout;
        rs.recv_queue = qp->rq_layout;
        logger(Component::kDevice)
            .debug("qp#{}: created (ctx#{} pd#{} sq {}x64 rq {}x{})", qp->number, ctx, rq.pd,
                   sq_entries, rq_entries, rq_entry_bytes);
        return status::kSuccess;
    }

    static int32_t destroy_qp(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                              hw::ObjectResponse &rs) {
        auto qp = d.find_qp(ctx, rq.object);
        if (!qp) return status::kInvalidParameter;
        d.destroy_qp(qp);
        rs.object = rq.object;
        return status::kSuccess;
    }

    static int32_t flush_qp(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                            hw::ObjectResponse &rs) {
        auto qp = d.find_qp(ctx, rq.object);
        if (!qp) return status::kInvalidParameter;
        {
            std::lock_guard lock(qp->mutex);
            rc::enter_error(*qp, "flush command");
        }
        Fabric::drain();
        rs.object = rq.object;
        return status::kSuccess;
    }

    // ---- SRQs
    static int32_t create_srq(Device &d, uint32_t &ctx, const hw::CreateSrqRequest &rq,
                              hw::CreateSrqResponse &rs) {
        auto c = d.find_context(ctx);
        const auto &l = d.limits();
        if (!c || rq.depth == 0 || rq.depth > l.max_srq_depth || rq.max_sge == 0 ||
            rq.max_sge > l.max_recv_sge || rq.limit > rq.depth) {
            return status::kInvalidParameter;
        }
        const uint32_t entries = std::bit_ceil(rq.depth);
        const hw::QueueLayout layout{0, 0, kRingStart, entries, rq.max_sge * hw::kSegmentBytes};
        if (over_quota(d, *c, &Device::Context::srqs, d.config_.quota.srqs)) {
            return status::kInsufficientResources;
        }
        auto memory =
            d.allocator_->allocate(kRingStart + uint64_t{entries} * rq.max_sge * hw::kSegmentBytes);
        if (!memory) return status::kInsufficientResources;
        hw::QueueLayout full = layout;
        full.bytes = memory->size();
        std::unique_lock lock(d.objects_mutex_);
        if (at_quota_locked(d, *c, &Device::Context::srqs, d.config_.quota.srqs)) {
            return status::kInsufficientResources;
        }
        Device::Pd *pd = owned_pd(d, ctx, rq.pd);
        if (pd == nullptr) return status::kInvalidParameter;
        if (d.free_srqs_.empty()) return status::kInsufficientResources;
        const uint32_t n = d.free_srqs_.top();
        auto srq = std::make_shared<Srq>(n, ctx, rq.pd, std::move(memory), full, rq.max_sge);
        if (!srq->ring) return status::kInternalError;
        srq->limit = rq.limit;
        d.free_srqs_.pop();
        d.srqs_[n] = srq;
        ++pd->users;
        c->srqs.insert(n);
        rs.srq = n;
        rs.memory = srq->memory->handle();
        rs.layout = full;
        return status::kSuccess;
    }

    static std::shared_ptr<Srq> owned_srq(Device &d, uint32_t ctx, uint32_t n) {
        std::shared_lock lock(d.objects_mutex_);
        if (n >= kMaxQueues || !d.srqs_[n] || d.srqs_[n]->context != ctx) return nullptr;
        return d.srqs_[n];
    }

    // Re-arms the limit event. Changing the depth (a resize) is not built: a depth above
    // the SRQ's capacity gives STATUS_NOT_SUPPORTED.
    static int32_t modify_srq(Device &d, uint32_t &ctx, const hw::CreateSrqRequest &rq,
                              hw::CreateSrqResponse &rs) {
        auto srq = owned_srq(d, ctx, rq.srq);
        if (!srq) return status::kInvalidParameter;
        std::lock_guard lock(srq->mutex);
        if (rq.depth > d.limits().max_srq_depth) return status::kInvalidParameter;
        if (rq.depth > srq->layout.entries) return status::kNotSupported;
        if (rq.limit > srq->layout.entries) return status::kInvalidParameter;
        srq->limit = rq.limit;
        rs.srq = rq.srq;
        srq->ring->acquire_producer();
        rs.queued = srq->ring->available();
        // Armed below the current level: the one-shot event fires at once (NDK ModifySrq).
        if (srq->take_limit_event()) d.post_event(srq->context, srq->limit_event());
        rs.memory = srq->memory->handle();
        rs.layout = srq->layout;
        return status::kSuccess;
    }

    static int32_t destroy_srq(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                               hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        std::unique_lock lock(d.objects_mutex_);
        if (!c || rq.object >= kMaxQueues || !d.srqs_[rq.object] ||
            d.srqs_[rq.object]->context != ctx) {
            return status::kInvalidParameter;
        }
        for (const auto &qp : d.qps_) {
            if (qp && qp->srq == d.srqs_[rq.object]) return status::kInvalidDeviceState;
        }
        if (auto pd = d.pds_.find(d.srqs_[rq.object]->pd); pd != d.pds_.end()) {
            --pd->second.users;
        }
        d.srqs_[rq.object].reset();
        d.free_srqs_.push(rq.object);
        c->srqs.erase(rq.object);
        rs.object = rq.object;
        return status::kSuccess;
    }

    // ---- memory regions
    // An MPT entry of `type` in PD rq.object, owned by the context (MRs and windows).
    static int32_t alloc_key(Device &d, uint32_t ctx, const hw::ObjectRequest &rq, MptType type,
                             hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        std::unique_lock lock(d.objects_mutex_);
        Device::Pd *pd = owned_pd(d, ctx, rq.object);
        if (!c || pd == nullptr) return status::kInvalidParameter;
        const bool window = type == MptType::kMwType1 || type == MptType::kMwType2;
        if (keys_at_quota_locked(d, *c, window)) return status::kInsufficientResources;
        const auto r = d.mpt_.allocate(type, rq.object);
        if (!r.ok()) return key_status_to_nt(r.status);
        const uint32_t index = hw::token_index(r.token);
        d.mpt_owners_[index] = Device::MptOwner{ctx, rq.object};
        ++pd->users;
        c->mrs.insert(index);
        if (window) c->mws.insert(index);
        rs.object = index;
        rs.token = r.token;
        return status::kSuccess;
    }

    // ObjectRequest::reserved = 1: a fast-register MR.
    static int32_t alloc_mr(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                            hw::ObjectResponse &rs) {
        return alloc_key(d, ctx, rq, rq.reserved == 1 ? MptType::kFastRegMr : MptType::kMr, rs);
    }

    // ObjectRequest::reserved = the window type, 1 or 2.
    static int32_t alloc_mw(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                            hw::ObjectResponse &rs) {
        if (rq.reserved != 1 && rq.reserved != 2) return status::kInvalidParameter;
        return alloc_key(d, ctx, rq, rq.reserved == 1 ? MptType::kMwType1 : MptType::kMwType2, rs);
    }

    static int32_t init_fast_reg_mr(Device &d, uint32_t &ctx, const hw::InitFastRegMrRequest &rq,
                                    hw::ObjectResponse &rs) {
        const uint32_t token = owned_token(d, ctx, rq.mpt_index);
        if (token == 0) return status::kInvalidParameter;
        if (rq.max_pages > d.limits().max_fast_register_pages) return status::kImplementationLimit;
        rs.object = rq.mpt_index;
        rs.token = token;
        const auto keys = (d.limits().quirks & hw::kQuirkRotateFastRegisterKeys) != 0
                              ? FastRegisterKeys::kRotate
                              : FastRegisterKeys::kStable;
        return key_status_to_nt(
            d.mpt_.init_fast_register(token, rq.max_pages, rq.remote_access != 0, keys));
    }

    // Current token of an MPT entry owned by ctx, or 0.
    static uint32_t owned_token(Device &d, uint32_t ctx, uint32_t index) {
        {
            std::shared_lock lock(d.objects_mutex_);
            auto it = d.mpt_owners_.find(index);
            if (it == d.mpt_owners_.end() || it->second.context != ctx) return 0;
        }
        auto info = d.mpt_.inspect(index);
        return info ? info->token : 0;
    }

    static int32_t register_mr(Device &d, uint32_t &ctx, const hw::RegisterMrRequest &rq,
                               hw::ObjectResponse &rs) {
        const uint32_t token = owned_token(d, ctx, rq.mpt_index);
        if (token == 0) return status::kInvalidParameter;
        if (rq.length == 0 || rq.length > d.limits().max_registration_bytes) {
            return status::kInvalidParameter;
        }
        RegisteredMemory memory;
        if (const int32_t s = d.allocator_->map_registration(rq.memory, rq.length, memory);
            s != status::kSuccess) {
            return s;
        }
        auto translation = Translation::contiguous(rq.iova, rq.length, memory.address,
                                                   std::move(memory.keepalive));
        if (!translation) return status::kInvalidParameter;
        const auto r = d.mpt_.register_mr(token, rq.access, rq.iova, rq.length, translation);
        if (!r.ok()) return key_status_to_nt(r.status);
        rs.object = rq.mpt_index;
        rs.token = r.token;
        return status::kSuccess;
    }

    static int32_t deregister_mr(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                 hw::ObjectResponse &rs) {
        const uint32_t token = owned_token(d, ctx, rq.object);
        if (token == 0) return status::kInvalidParameter;
        rs.object = rq.object;
        return key_status_to_nt(d.mpt_.deregister_mr(token));
    }

    static int32_t free_mr(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                           hw::ObjectResponse &rs) {
        const uint32_t token = owned_token(d, ctx, rq.object);
        if (token == 0) return status::kInvalidParameter;
        const KeyStatus s = d.mpt_.deallocate(token);
        if (s != KeyStatus::kOk) return key_status_to_nt(s);
        auto c = d.find_context(ctx);
        std::unique_lock lock(d.objects_mutex_);
        if (auto it = d.mpt_owners_.find(rq.object); it != d.mpt_owners_.end()) {
            if (auto pd = d.pds_.find(it->second.pd); pd != d.pds_.end()) --pd->second.users;
            d.mpt_owners_.erase(it);
        }
        if (c) {
            c->mrs.erase(rq.object);
            c->mws.erase(rq.object);
        }
        rs.object = rq.object;
        return status::kSuccess;
    }

    // ---- logical address space (NdkBuildLAM / NdkReleaseLAM) and the privileged key
    static int32_t build_lam(Device &d, uint32_t &ctx, const hw::BuildLamRequest &rq,
                             hw::BuildLamResponse &rs) {
        auto c = d.find_context(ctx);
        if (!c) return status::kInvalidParameter;
        const uint64_t page = hw::kPageBytes;
        if (rq.length == 0 || rq.address % page != 0 || rq.length % page != 0 ||
            rq.length > d.limits().max_registration_bytes || !range_fits(rq.address, rq.length)) {
            return status::kInvalidParameter;
        }
        RegisteredMemory memory;
        if (const int32_t s = d.allocator_->map_registration(rq.memory, rq.length, memory);
            s != status::kSuccess) {
            return s;
        }
        const auto pages = static_cast<uint32_t>(rq.length / page);
        const uint32_t lam =
            c->lam->map(rq.address, pages, memory.address, std::move(memory.keepalive));
        if (lam == 0) return status::kInvalidParameter;
        rs.lam = lam;
        rs.page_count = pages;
        rs.first_logical_page = rq.address;
        return status::kSuccess;
    }

    static int32_t release_lam(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                               hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        if (!c || !c->lam->unmap(rq.object)) return status::kInvalidParameter;
        rs.object = rq.object;
        return status::kSuccess;
    }

    // The PD's privileged key: local read/write over the context's logical address
    // space. Created on first use and kept until the PD goes, so every call answers
    // the same token.
    static int32_t privileged_token(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                    hw::ObjectResponse &rs) {
        auto c = d.find_context(ctx);
        std::unique_lock lock(d.objects_mutex_);
        Device::Pd *pd = owned_pd(d, ctx, rq.object);
        if (!c || pd == nullptr) return status::kInvalidParameter;
        if (pd->privileged == 0) {
            if (keys_at_quota_locked(d, *c, false)) return status::kInsufficientResources;
            c->lam->retain_released();
            const auto r = d.mpt_.create_privileged(rq.object, Translation::logical(c->lam));
            if (!r.ok()) return key_status_to_nt(r.status);
            const uint32_t index = hw::token_index(r.token);
            pd->privileged = index;
            d.mpt_owners_[index] = Device::MptOwner{ctx, rq.object};
            c->mrs.insert(index);
        }
        const auto info = d.mpt_.inspect(pd->privileged);
        if (!info) return status::kInvalidDeviceState;
        rs.object = pd->privileged;
        rs.token = info->token;
        return status::kSuccess;
    }

    // ---- connection management (cm.hpp does the work)
    static int32_t listen(Device &d, uint32_t &ctx, const hw::ListenRequest &rq,
                          hw::ListenResponse &rs) {
        if (!d.find_context(ctx)) return status::kInvalidParameter;
        return d.cm_->listen(ctx, rq.address, rs.listener, rs.bound, d.config_.quota.listeners);
    }
    static int32_t close_listener(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                  hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return d.cm_->close_listener(ctx, rq.object);
    }
    static int32_t create_shared_endpoint(Device &d, uint32_t &ctx, const hw::ListenRequest &rq,
                                          hw::ListenResponse &rs) {
        if (!d.find_context(ctx)) return status::kInvalidParameter;
        return d.cm_->create_shared_endpoint(ctx, rq.address, rs.listener, rs.bound,
                                             d.config_.quota.listeners);
    }
    static int32_t close_shared_endpoint(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                         hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return d.cm_->close_shared_endpoint(ctx, rq.object);
    }
    static int32_t pause_listener(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                  hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return d.cm_->pause_listener(ctx, rq.object, rq.reserved != 0);
    }
    // The CM queues its messages on this thread's outbox; a command that sends one
    // delivers them before it answers, so the peer has seen it when the command returns.
    template <class Step>
    static int32_t then_drain(Step &&step) {
        const int32_t s = step();
        Fabric::drain();
        return s;
    }
    static int32_t connect(Device &d, uint32_t &ctx, const hw::ConnectRequest &rq,
                           hw::ObjectResponse &rs) {
        if (!d.find_context(ctx)) return status::kInvalidParameter;
        return then_drain([&] { return d.cm_->connect(ctx, rq, rs.object); });
    }
    static int32_t accept(Device &d, uint32_t &ctx, const hw::AcceptRequest &rq,
                          hw::ObjectResponse &rs) {
        rs.object = rq.connection;
        return then_drain([&] { return d.cm_->accept(ctx, rq); });
    }
    static int32_t reject(Device &d, uint32_t &ctx, const hw::AcceptRequest &rq,
                          hw::ObjectResponse &rs) {
        rs.object = rq.connection;
        return then_drain([&] { return d.cm_->reject(ctx, rq); });
    }
    static int32_t complete_connect(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                    hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return then_drain([&] { return d.cm_->complete_connect(ctx, rq.object); });
    }
    static int32_t disconnect(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                              hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return then_drain([&] { return d.cm_->disconnect(ctx, rq.object); });
    }
    static int32_t close_connection(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                    hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return then_drain([&] { return d.cm_->close_connection(ctx, rq.object); });
    }
    static int32_t query_connection(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                    hw::QueryConnectionResponse &rs) {
        return d.cm_->query_connection(ctx, rq.object, rs.info);
    }

    // ---- fault injection (faults.hpp; contract in device.hpp)
    static int32_t inject_fault(Device &d, uint32_t &ctx, const hw::FaultRequest &rq,
                                hw::ObjectResponse &rs) {
        using K = hw::FaultKind;
        const auto kind = static_cast<K>(rq.kind);
        const uint64_t now = d.clock_.now();
        const bool on_cq = kind == K::kCqOverrun || kind == K::kEqStorm;
        const bool immediate =
            on_cq || kind == K::kQpError || kind == K::kKillConnection || kind == K::kPeerVanish;
        if (on_cq) {
            auto cq = owned_cq(d, ctx, rq.qp);
            if (!cq) return status::kInvalidParameter;
            if (kind == K::kCqOverrun) {
                if (cq->overrun(now)) {
                    d.faults_->record(kind, rq.qp, now, "CQ overrun");
                    d.fail_cq_qps(rq.qp);
                    Fabric::drain();
                }
                return status::kSuccess;
            }
            if (rq.count == 0 || rq.count > 1024) return status::kInvalidParameter;
            for (uint32_t i = 0; i < rq.count; ++i) {
                hw::Eqe e{};
                e.object = rq.qp;
                e.type = static_cast<uint8_t>(hw::EqeType::kCompletion);
                d.faults_->record(kind, rq.qp, now, "spurious completion event");
                d.post_event(cq->context(), e);
            }
            return status::kSuccess;
        }
        // A QP named must be the consumer's; immediate kinds need one.
        std::shared_ptr<Qp> qp;
        if (rq.qp != hw::kNoObject) {
            qp = d.find_consumer_qp(ctx, rq.qp);
            if (!qp) return status::kInvalidParameter;
        } else if (immediate) {
            return status::kInvalidParameter;
        }
        switch (kind) {
            case K::kQpError: {
                const int32_t cause = rq.status == 0
                                          ? static_cast<int32_t>(hw::Syndrome::kWorkRequestFlushed)
                                          : rq.status;
                if (cause < 0 || cause > 0xff) return status::kInvalidParameter;
                {
                    std::lock_guard lock(qp->mutex);
                    if (qp->destroyed) return status::kInvalidParameter;
                    rc::enter_error(*qp, "fault injected", static_cast<hw::Syndrome>(cause));
                }
                d.faults_->record(kind, rq.qp, now, "QP moved to ERROR");
                Fabric::drain();
                return status::kSuccess;
            }
            case K::kKillConnection: {
                const int32_t s = then_drain([&] { return d.cm_->kill_connection(rq.qp); });
                if (s == status::kSuccess)
                    d.faults_->record(kind, rq.qp, now,
                                      "connection killed (both ends disconnected)");
                return s;
            }
            case K::kPeerVanish: {
                wire::IpAddr peer;
                {
                    std::lock_guard lock(qp->mutex);
                    if (qp->state != QpState::kRts && qp->state != QpState::kRtr)
                        return status::kInvalidDeviceState;
                    peer = qp->path.remote_ip;
                }
                d.faults_->vanish(ctx, rq.qp, peer, rs.object);
                d.faults_->record(kind, rq.qp, now, "the QP's peer vanished");
                return status::kSuccess;
            }
            case K::kExpireToken: {
                std::shared_lock lock(d.objects_mutex_);
                const auto owner = d.mpt_owners_.find(hw::token_index(rq.token));
                if (owner == d.mpt_owners_.end() ||
                    !d.same_consumer_locked(owner->second.context, ctx)) {
                    return status::kInvalidParameter;  // not a token this consumer handed out
                }
                break;
            }
            default:
                break;
        }
        return d.faults_->add(ctx, rq, rs.object);
    }
    static int32_t query_counters(Device &d, uint32_t &, const hw::ObjectRequest &,
                                  hw::CountersResponse &rs) {
        rs.count = static_cast<uint32_t>(Counter::kCount);
        for (uint32_t i = 0; i < rs.count; ++i)
            rs.values[i] = d.counters_.get(static_cast<Counter>(i));
        // The cache counters live in the timing model, which counts them under its lock.
        const time::TimingModel::Stats cache = d.timing().stats();
        rs.values[static_cast<size_t>(Counter::qpc_cache_hits)] = cache.qpc_hits;
        rs.values[static_cast<size_t>(Counter::qpc_cache_misses)] = cache.qpc_misses;
        rs.values[static_cast<size_t>(Counter::mpt_cache_hits)] = cache.mpt_hits;
        rs.values[static_cast<size_t>(Counter::mpt_cache_misses)] = cache.mpt_misses;
        rs.values[static_cast<size_t>(Counter::mtt_cache_hits)] = cache.mtt_hits;
        rs.values[static_cast<size_t>(Counter::mtt_cache_misses)] = cache.mtt_misses;
        return status::kSuccess;
    }
    // kQueryResources (hw_interface.hpp section 13): every context's objects. The table
    // lock is dropped before any object lock is taken (device.hpp, lock order).
    static int32_t query_resources(Device &d, uint32_t &, const hw::ResourcesRequest &rq,
                                   hw::ResourcesResponse &rs) {
        const auto kind = static_cast<hw::ResourceKind>(rq.kind);
        if (rq.kind < static_cast<uint32_t>(hw::ResourceKind::kQp) ||
            rq.kind > static_cast<uint32_t>(hw::ResourceKind::kCm))
            return status::kInvalidParameter;
        // One more than a page, to know whether another page follows.
        const size_t wanted = hw::kResourcesPerPage + 1;
        std::vector<hw::ResourceEntry> found;
        if (kind == hw::ResourceKind::kCm) found = d.cm().resources(rq.start, wanted);
        std::vector<std::shared_ptr<Qp>> qps;
        std::vector<std::shared_ptr<Cq>> cqs;
        std::vector<std::shared_ptr<Srq>> srqs;
        {
            std::shared_lock lock(d.objects_mutex_);
            auto pid_of = [&](uint32_t context) {
                const auto c = d.contexts_.find(context);
                return c == d.contexts_.end() ? 0u : c->second->process_id;
            };
            auto take = [&](uint32_t number, uint32_t context) {
                hw::ResourceEntry e{};
                e.number = number;
                e.context = context;
                e.process_id = pid_of(context);
                found.push_back(e);
            };
            // The CM's entries name their context; the table gives its process.
            for (hw::ResourceEntry &e : found)
                e.process_id = pid_of(e.context);
            if (kind == hw::ResourceKind::kCm) {
                // listed by the CM above
            } else if (kind == hw::ResourceKind::kSrq) {
                for (size_t n = rq.start; n < d.srqs_.size() && found.size() < wanted; ++n) {
                    if (d.srqs_[n] == nullptr) continue;
                    take(static_cast<uint32_t>(n), d.srqs_[n]->context);
                    srqs.push_back(d.srqs_[n]);
                }
            } else if (kind == hw::ResourceKind::kPd) {
                for (auto it = d.pds_.lower_bound(rq.start);
                     it != d.pds_.end() && found.size() < wanted; ++it) {
                    take(it->first, it->second.context);
                    found.back().values[0] = it->second.users;
                }
            } else if (kind == hw::ResourceKind::kMr) {
                std::vector<std::pair<uint32_t, Device::MptOwner>> keys;
                for (const auto &[index, key_owner] : d.mpt_owners_)
                    if (index >= rq.start) keys.emplace_back(index, key_owner);
                std::sort(keys.begin(), keys.end(),
                          [](const auto &x, const auto &y) { return x.first < y.first; });
                for (size_t i = 0; i < keys.size() && found.size() < wanted; ++i) {
                    take(keys[i].first, keys[i].second.context);
                    found.back().values[0] = keys[i].second.pd;
                }
            } else if (kind == hw::ResourceKind::kQp) {
                for (size_t n = rq.start; n < d.qps_.size() && found.size() < wanted; ++n) {
                    if (d.qps_[n] == nullptr) continue;
                    take(static_cast<uint32_t>(n), d.qps_[n]->context);
                    qps.push_back(d.qps_[n]);
                }
            } else {
                for (size_t n = rq.start; n < d.cqs_.size() && found.size() < wanted; ++n) {
                    if (d.cqs_[n] == nullptr) continue;
                    take(static_cast<uint32_t>(n), d.cqs_[n]->context());
                    cqs.push_back(d.cqs_[n]);
                }
            }
        }
        for (size_t i = 0; i < qps.size() && i < hw::kResourcesPerPage; ++i) {
            Qp &qp = *qps[i];
            std::lock_guard lock(qp.mutex);
            hw::ResourceEntry &e = found[i];
            e.state = static_cast<uint32_t>(qp.state);
            const uint32_t values[hw::kResourceValues] = {
                qp.pd,
                qp.send_cq ? qp.send_cq->number() : hw::kNoObject,
                qp.recv_cq ? qp.recv_cq->number() : hw::kNoObject,
                qp.srq ? qp.srq->number : hw::kNoObject,
                qp.sq_layout.entries,
                static_cast<uint32_t>(qp.req.wqes.size()),
                qp.rq_layout.entries,
                qp.req.next_psn,
                qp.req.una_psn,
                qp.resp.epsn,
                qp.path.remote_qpn,
                qp.connection,
                qp.req.sq ? qp.req.sq->published_unconsumed() : 0,
                qp.resp.rq ? qp.resp.rq->published_unconsumed() : 0};
            std::memcpy(e.values, values, sizeof values);
        }
        for (size_t i = 0; i < srqs.size() && i < hw::kResourcesPerPage; ++i) {
            Srq &srq = *srqs[i];
            std::lock_guard lock(srq.mutex);
            hw::ResourceEntry &e = found[i];
            e.values[0] = srq.pd;
            e.values[1] = srq.layout.entries;
            e.values[2] = srq.ring ? srq.ring->published_unconsumed() : 0;
            e.values[3] = srq.limit;
            e.values[4] = srq.max_sge;
        }
        for (size_t i = 0; i < cqs.size() && i < hw::kResourcesPerPage; ++i) {
            const Cq::Snapshot c = cqs[i]->snapshot();
            hw::ResourceEntry &e = found[i];
            e.state = (c.armed ? 1u : 0u) | (c.dead ? 2u : 0u);
            e.values[0] = c.entries;
            e.values[1] = c.queued;
            e.values[2] = static_cast<uint32_t>(c.arm_type);
        }
        if (kind == hw::ResourceKind::kMr) {
            for (size_t i = 0; i < found.size() && i < hw::kResourcesPerPage; ++i) {
                hw::ResourceEntry &e = found[i];
                const std::optional<EntryInfo> info = d.mpt_.inspect(e.number);
                if (!info) continue;  // freed since the table was read
                e.state = static_cast<uint32_t>(info->state);
                e.values[1] = info->token;
                e.values[2] = info->access;
                e.values[3] = static_cast<uint32_t>(info->iova);
                e.values[4] = static_cast<uint32_t>(info->iova >> 32);
                e.values[5] = static_cast<uint32_t>(info->length);
                e.values[6] = static_cast<uint32_t>(info->length >> 32);
                e.values[7] = static_cast<uint32_t>(info->type);
            }
        }
        rs.count = static_cast<uint32_t>(std::min<size_t>(found.size(), hw::kResourcesPerPage));
        rs.next = found.size() > hw::kResourcesPerPage ? found[hw::kResourcesPerPage].number : 0;
        std::copy_n(found.begin(), rs.count, rs.entries);
        return status::kSuccess;
    }
    static int32_t remove_fault(Device &d, uint32_t &ctx, const hw::ObjectRequest &rq,
                                hw::ObjectResponse &rs) {
        rs.object = rq.object;
        return d.faults_->remove(ctx, rq.object);
    }
};

// clang-format off
#define SOFTNDK_CMD(op, Req, Resp, fn) \
    Commands::Spec{hw::CommandOpcode::op, sizeof(hw::Req), &Commands::invoke<hw::Req, hw::Resp, &Commands::fn>}
static const Commands::Spec kCommandTable[] = {
    SOFTNDK_CMD(kAttach,          AttachRequest,    AttachResponse,          attach),
    SOFTNDK_CMD(kDetach,          ObjectRequest,    ObjectResponse,          detach),
    SOFTNDK_CMD(kCreatePd,        ObjectRequest,    ObjectResponse,          create_pd),
    SOFTNDK_CMD(kDestroyPd,       ObjectRequest,    ObjectResponse,          destroy_pd),
    SOFTNDK_CMD(kCreateCq,        CreateCqRequest,  CreateCqResponse,        create_cq),
    SOFTNDK_CMD(kDestroyCq,       ObjectRequest,    ObjectResponse,          destroy_cq),
    SOFTNDK_CMD(kResizeCq,        CreateCqRequest,  CreateCqResponse,        resize_cq),
    SOFTNDK_CMD(kModerateCq,      ModerateCqRequest, ObjectResponse,         moderate_cq),
    SOFTNDK_CMD(kCreateQp,        CreateQpRequest,  CreateQpResponse,        create_qp),
    SOFTNDK_CMD(kDestroyQp,       ObjectRequest,    ObjectResponse,          destroy_qp),
    SOFTNDK_CMD(kCreateSrq,       CreateSrqRequest, CreateSrqResponse,       create_srq),
    SOFTNDK_CMD(kModifySrq,       CreateSrqRequest, CreateSrqResponse,       modify_srq),
    SOFTNDK_CMD(kDestroySrq,      ObjectRequest,    ObjectResponse,          destroy_srq),
    SOFTNDK_CMD(kFlushQp,         ObjectRequest,    ObjectResponse,          flush_qp),
    SOFTNDK_CMD(kAllocMr,         ObjectRequest,    ObjectResponse,          alloc_mr),
    SOFTNDK_CMD(kRegisterMr,      RegisterMrRequest, ObjectResponse,         register_mr),
    SOFTNDK_CMD(kDeregisterMr,    ObjectRequest,    ObjectResponse,          deregister_mr),
    SOFTNDK_CMD(kFreeMr,          ObjectRequest,    ObjectResponse,          free_mr),
    SOFTNDK_CMD(kInitFastRegMr,   InitFastRegMrRequest, ObjectResponse,      init_fast_reg_mr),
    SOFTNDK_CMD(kBuildLam,        BuildLamRequest,  BuildLamResponse,        build_lam),
    SOFTNDK_CMD(kReleaseLam,      ObjectRequest,    ObjectResponse,          release_lam),
    SOFTNDK_CMD(kPrivilegedToken, ObjectRequest,    ObjectResponse,          privileged_token),
    SOFTNDK_CMD(kAllocMw,         ObjectRequest,    ObjectResponse,          alloc_mw),
    SOFTNDK_CMD(kFreeMw,          ObjectRequest,    ObjectResponse,          free_mr),
    SOFTNDK_CMD(kListen,          ListenRequest,    ListenResponse,          listen),
    SOFTNDK_CMD(kCloseListener,   ObjectRequest,    ObjectResponse,          close_listener),
    SOFTNDK_CMD(kPauseListener,   ObjectRequest,    ObjectResponse,          pause_listener),
    SOFTNDK_CMD(kConnect,         ConnectRequest,   ObjectResponse,          connect),
    SOFTNDK_CMD(kAccept,          AcceptRequest,    ObjectResponse,          accept),
    SOFTNDK_CMD(kReject,          AcceptRequest,    ObjectResponse,          reject),
    SOFTNDK_CMD(kCompleteConnect, ObjectRequest,    ObjectResponse,          complete_connect),
    SOFTNDK_CMD(kDisconnect,      ObjectRequest,    ObjectResponse,          disconnect),
    SOFTNDK_CMD(kCloseConnection, ObjectRequest,    ObjectResponse,          close_connection),
    SOFTNDK_CMD(kQueryConnection, ObjectRequest,    QueryConnectionResponse, query_connection),
    SOFTNDK_CMD(kCreateSharedEndpoint, ListenRequest, ListenResponse,       create_shared_endpoint),
    SOFTNDK_CMD(kCloseSharedEndpoint, ObjectRequest, ObjectResponse,        close_shared_endpoint),
    SOFTNDK_CMD(kInjectFault,     FaultRequest,     ObjectResponse,          inject_fault),
    SOFTNDK_CMD(kRemoveFault,     ObjectRequest,    ObjectResponse,          remove_fault),
    SOFTNDK_CMD(kQueryCounters,   ObjectRequest,    CountersResponse,        query_counters),
    SOFTNDK_CMD(kQueryResources,  ResourcesRequest, ResourcesResponse,       query_resources),
};
#undef SOFTNDK_CMD
// clang-format on

const Commands::Spec *Commands::find(hw::CommandOpcode op) {
    for (const auto &s : kCommandTable) {
        if (s.op == op) return &s;
    }
    return nullptr;
}

int32_t Device::execute(uint32_t context, std::span<const std::byte> request,
                        std::span<std::byte> response) {
    if (response.size() < sizeof(hw::ResponseHeader)) return status::kBufferTooSmall;
    hw::ResponseHeader header{};
    auto fail = [&](int32_t s) {
        header.status = s;
        std::memcpy(response.data(), &header, sizeof(header));
        return s;
    };
    if (request.size() < sizeof(hw::CommandHeader)) return fail(status::kInvalidParameter);
    hw::CommandHeader h;
    std::memcpy(&h, request.data(), sizeof(h));
    header.sequence = h.sequence;
    const Commands::Spec *spec = Commands::find(h.opcode);
    if (spec == nullptr) return fail(status::kNotSupported);
    if (h.request_bytes != spec->request_bytes || request.size() < spec->request_bytes) {
        return fail(status::kInvalidParameter);
    }
    if (h.opcode != hw::CommandOpcode::kAttach && !find_context(context)) {
        return fail(status::kInvalidParameter);
    }
    if (h.opcode != hw::CommandOpcode::kAttach && h.opcode != hw::CommandOpcode::kDetach) {
        if (auto injected = faults_->fail_command(h.opcode, context)) return fail(*injected);
    }
    uint32_t ctx = context;
    return spec->handler(*this, ctx, request.data(), response.data(), response.size());
}

// ---- object teardown

void Device::destroy_qp(const std::shared_ptr<Qp> &qp) {
    cm_->qp_destroyed(qp->number);
    {
        std::unique_lock lock(objects_mutex_);
        if (qps_[qp->number] != qp) return;
        qps_[qp->number].reset();
        free_qps_.push_back(qp->number);
        if (auto pd = pds_.find(qp->pd); pd != pds_.end()) --pd->second.users;
        if (auto c = contexts_.find(qp->context); c != contexts_.end())
            c->second->qps.erase(qp->number);
    }
    std::lock_guard lock(qp->mutex);
    qp->destroyed = true;
    qp->state = QpState::kError;
    logger(Component::kDevice).debug("qp#{}: destroyed", qp->number);
}

void Device::destroy_context(Context &c) {
    faults_->context_gone(c.id);
    cm_->context_died(c.id);
    std::vector<std::shared_ptr<Qp>> qps;
    {
        std::shared_lock lock(objects_mutex_);
        for (uint32_t n : c.qps)
            qps.push_back(qps_[n]);
    }
    for (auto &qp : qps) {
        if (qp) destroy_qp(qp);
    }
    std::vector<uint32_t> mrs;
    {
        std::unique_lock lock(objects_mutex_);
        mrs.assign(c.mrs.begin(), c.mrs.end());
        for (uint32_t n : c.cqs) {
            cqs_[n].reset();
            free_cqs_.push(n);
        }
        for (uint32_t n : c.srqs) {
            srqs_[n].reset();
            free_srqs_.push(n);
        }
        c.srqs.clear();
        for (uint32_t n : c.pds)
            pds_.erase(n);
        for (uint32_t n : mrs)
            mpt_owners_.erase(n);
        c.cqs.clear();
        c.pds.clear();
        c.mrs.clear();
        c.mws.clear();
        contexts_.erase(c.id);
    }
    for (uint32_t n : mrs) {
        if (auto info = mpt_.inspect(n); info && info->type != MptType::kUnallocated) {
            if (info->state == MptState::kValid && info->type == MptType::kMr) {
                mpt_.deregister_mr(info->token);
            }
            mpt_.deallocate(mpt_.inspect(n)->token);
        }
    }
    Fabric::drain();
    logger(Component::kDevice).debug("{}: ctx#{} detached", config_.alias, c.id);
}

}  // namespace softndk::emu
