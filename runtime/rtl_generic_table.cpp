// RTL_GENERIC_TABLE: Windows' splay-tree generic table. Each element lives in a node the
// caller's AllocateRoutine provides: RTL_SPLAY_LINKS, then the LIST_ENTRY of the insertion
// order list, then the caller's data (at the offset Windows uses, 8-byte aligned). As in
// Windows, the root's Parent points to the root itself, and RtlEnumerateGenericTable keeps its
// position by splaying the element it returns to the root.

#include <cstddef>
#include <cstring>

#include "wdk_internal.hpp"

namespace softndk::wdk {
namespace {

struct TableEntryHeader {
    RTL_SPLAY_LINKS links;
    LIST_ENTRY order;
    LONGLONG user_data;  // the caller's data starts here
};
constexpr size_t kUserDataOffset = offsetof(TableEntryHeader, user_data);

TableEntryHeader *entry_of(PRTL_SPLAY_LINKS links) {
    return reinterpret_cast<TableEntryHeader *>(links);
}
PVOID data_of(PRTL_SPLAY_LINKS links) {
    return reinterpret_cast<unsigned char *>(links) + kUserDataOffset;
}
bool is_root(PRTL_SPLAY_LINKS n) {
    return n->Parent == n;
}

// One rotation moving `x` above its parent.
void rotate(PRTL_SPLAY_LINKS x) {
    PRTL_SPLAY_LINKS p = x->Parent;
    PRTL_SPLAY_LINKS g = p->Parent;
    const bool parent_was_root = is_root(p);
    if (p->LeftChild == x) {
        p->LeftChild = x->RightChild;
        if (x->RightChild != nullptr) x->RightChild->Parent = p;
        x->RightChild = p;
    } else {
        p->RightChild = x->LeftChild;
        if (x->LeftChild != nullptr) x->LeftChild->Parent = p;
        x->LeftChild = p;
    }
    p->Parent = x;
    if (parent_was_root) {
        x->Parent = x;
    } else {
        x->Parent = g;
        if (g->LeftChild == p) {
            g->LeftChild = x;
        } else {
            g->RightChild = x;
        }
    }
}

// Bottom-up splay: `x` becomes the root of its tree (zig, zig-zig, zig-zag steps).
PRTL_SPLAY_LINKS splay(PRTL_SPLAY_LINKS x) {
    while (!is_root(x)) {
        PRTL_SPLAY_LINKS p = x->Parent;
        if (is_root(p)) {
            rotate(x);
        } else if ((p->Parent->LeftChild == p) == (p->LeftChild == x)) {
            rotate(p);
            rotate(x);
        } else {
            rotate(x);
            rotate(x);
        }
    }
    return x;
}

PRTL_SPLAY_LINKS leftmost(PRTL_SPLAY_LINKS n) {
    while (n->LeftChild != nullptr)
        n = n->LeftChild;
    return n;
}
PRTL_SPLAY_LINKS rightmost(PRTL_SPLAY_LINKS n) {
    while (n->RightChild != nullptr)
        n = n->RightChild;
    return n;
}

// The in-order successor, or NULL.
PRTL_SPLAY_LINKS successor(PRTL_SPLAY_LINKS n) {
    if (n->RightChild != nullptr) return leftmost(n->RightChild);
    while (!is_root(n) && n->Parent->RightChild == n)
        n = n->Parent;
    return is_root(n) ? nullptr : n->Parent;
}

// Finds the node equal to `buffer`; otherwise returns NULL with `last` = the node under which
// it would be inserted and `result` = how it compared with `last`.
PRTL_SPLAY_LINKS find(PRTL_GENERIC_TABLE table, PVOID buffer, PRTL_SPLAY_LINKS &last,
                      RTL_GENERIC_COMPARE_RESULTS &result) {
    last = nullptr;
    PRTL_SPLAY_LINKS n = table->TableRoot;
    while (n != nullptr) {
        last = n;
        result = table->CompareRoutine(table, buffer, data_of(n));
        if (result == GenericEqual) return n;
        n = result == GenericLessThan ? n->LeftChild : n->RightChild;
    }
    return nullptr;
}

void reset_order_cache(PRTL_GENERIC_TABLE table) {
    table->OrderedPointer = &table->InsertOrderList;
    table->WhichOrderedElement = 0;
}

}  // namespace
}  // namespace softndk::wdk

namespace wdk = softndk::wdk;

extern "C" {

VOID NTAPI RtlInitializeGenericTable(PRTL_GENERIC_TABLE Table,
                                     PRTL_GENERIC_COMPARE_ROUTINE CompareRoutine,
                                     PRTL_GENERIC_ALLOCATE_ROUTINE AllocateRoutine,
                                     PRTL_GENERIC_FREE_ROUTINE FreeRoutine, PVOID TableContext) {
    Table->TableRoot = nullptr;
    InitializeListHead(&Table->InsertOrderList);
    wdk::reset_order_cache(Table);
    Table->NumberGenericTableElements = 0;
    Table->CompareRoutine = CompareRoutine;
    Table->AllocateRoutine = AllocateRoutine;
    Table->FreeRoutine = FreeRoutine;
    Table->TableContext = TableContext;
}

PVOID NTAPI RtlInsertElementGenericTable(PRTL_GENERIC_TABLE Table, PVOID Buffer, CLONG BufferSize,
                                         PBOOLEAN NewElement) {
    PRTL_SPLAY_LINKS last = nullptr;
    RTL_GENERIC_COMPARE_RESULTS result = GenericEqual;
    if (PRTL_SPLAY_LINKS found = wdk::find(Table, Buffer, last, result)) {
        Table->TableRoot = wdk::splay(found);
        if (NewElement != nullptr) *NewElement = FALSE;
        return wdk::data_of(found);
    }
    const CLONG size = static_cast<CLONG>(wdk::kUserDataOffset) + BufferSize;
    auto *entry = static_cast<wdk::TableEntryHeader *>(Table->AllocateRoutine(Table, size));
    if (entry == nullptr) {
        if (NewElement != nullptr) *NewElement = FALSE;
        return nullptr;
    }
    PRTL_SPLAY_LINKS node = &entry->links;
    node->LeftChild = node->RightChild = nullptr;
    if (last == nullptr) {
        node->Parent = node;
    } else {
        node->Parent = last;
        if (result == GenericLessThan) {
            last->LeftChild = node;
        } else {
            last->RightChild = node;
        }
    }
    InsertTailList(&Table->InsertOrderList, &entry->order);
    ++Table->NumberGenericTableElements;
    std::memcpy(wdk::data_of(node), Buffer, BufferSize);
    Table->TableRoot = wdk::splay(node);
    if (NewElement != nullptr) *NewElement = TRUE;
    return wdk::data_of(node);
}

PVOID NTAPI RtlLookupElementGenericTable(PRTL_GENERIC_TABLE Table, PVOID Buffer) {
    PRTL_SPLAY_LINKS last = nullptr;
    RTL_GENERIC_COMPARE_RESULTS result = GenericEqual;
    PRTL_SPLAY_LINKS found = wdk::find(Table, Buffer, last, result);
    if (found == nullptr) {
        if (last != nullptr) Table->TableRoot = wdk::splay(last);
        return nullptr;
    }
    Table->TableRoot = wdk::splay(found);
    return wdk::data_of(found);
}

BOOLEAN NTAPI RtlDeleteElementGenericTable(PRTL_GENERIC_TABLE Table, PVOID Buffer) {
    PRTL_SPLAY_LINKS last = nullptr;
    RTL_GENERIC_COMPARE_RESULTS result = GenericEqual;
    PRTL_SPLAY_LINKS node = wdk::find(Table, Buffer, last, result);
    if (node == nullptr) return FALSE;
    wdk::splay(node);
    PRTL_SPLAY_LINKS left = node->LeftChild;
    PRTL_SPLAY_LINKS right = node->RightChild;
    if (left == nullptr) {
        if (right != nullptr) right->Parent = right;
        Table->TableRoot = right;
    } else {
        // Join: the largest element of the left subtree becomes the root (it has no right
        // child once splayed there) and takes the right subtree.
        left->Parent = left;
        PRTL_SPLAY_LINKS join = wdk::splay(wdk::rightmost(left));
        join->RightChild = right;
        if (right != nullptr) right->Parent = join;
        Table->TableRoot = join;
    }
    wdk::TableEntryHeader *entry = wdk::entry_of(node);
    RemoveEntryList(&entry->order);
    --Table->NumberGenericTableElements;
    wdk::reset_order_cache(Table);
    Table->FreeRoutine(Table, entry);
    return TRUE;
}

PVOID NTAPI RtlEnumerateGenericTable(PRTL_GENERIC_TABLE Table, BOOLEAN Restart) {
    if (Table->TableRoot == nullptr) return nullptr;
    PRTL_SPLAY_LINKS next =
        Restart ? wdk::leftmost(Table->TableRoot) : wdk::successor(Table->TableRoot);
    if (next == nullptr) return nullptr;
    Table->TableRoot = wdk::splay(next);
    return wdk::data_of(next);
}

PVOID NTAPI RtlEnumerateGenericTableWithoutSplaying(PRTL_GENERIC_TABLE Table, PVOID *RestartKey) {
    if (Table->TableRoot == nullptr) return nullptr;
    auto *position = static_cast<PRTL_SPLAY_LINKS>(*RestartKey);
    PRTL_SPLAY_LINKS next =
        position == nullptr ? wdk::leftmost(Table->TableRoot) : wdk::successor(position);
    if (next == nullptr) return nullptr;
    *RestartKey = next;
    return wdk::data_of(next);
}

PVOID NTAPI RtlGetElementGenericTable(PRTL_GENERIC_TABLE Table, ULONG I) {
    if (I >= Table->NumberGenericTableElements) return nullptr;
    PLIST_ENTRY entry = Table->InsertOrderList.Flink;
    for (ULONG k = 0; k < I; ++k)
        entry = entry->Flink;
    // Windows caches the position (1-based) for the next call; keep the fields meaningful.
    Table->OrderedPointer = entry;
    Table->WhichOrderedElement = I + 1;
    auto *header = CONTAINING_RECORD(entry, wdk::TableEntryHeader, order);
    return wdk::data_of(&header->links);
}

ULONG NTAPI RtlNumberGenericTableElements(PRTL_GENERIC_TABLE Table) {
    return Table->NumberGenericTableElements;
}

BOOLEAN NTAPI RtlIsGenericTableEmpty(PRTL_GENERIC_TABLE Table) {
    return Table->TableRoot == nullptr ? TRUE : FALSE;
}

}  // extern "C"
