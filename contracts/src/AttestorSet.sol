// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAttestorSet} from "./interfaces/IAttestorSet.sol";
import {IRiskGate} from "./interfaces/IRiskGate.sol";
import {Attestation} from "./libraries/Attestation.sol";
import {GateLimits} from "./libraries/GateLimits.sol";
import {Reason, Reasons, Verdict, Verdicts} from "./libraries/GateTypes.sol";
import {VerdictParser} from "./libraries/VerdictParser.sol";

/// @title AttestorSet
/// @notice The signers of one attested RiskGate, deployed by that gate's constructor with the
/// list the gate validated, and the check of their signed answers. Its own contract so that the
/// gate stays under the code size limit; it holds no state, moves no money and changes nothing:
/// the gate decides, from what `tally` returns, whether an answer counts.
contract AttestorSet is IAttestorSet {
    address public immutable gate;

    // The signers as immutables (no storage read per answer); unused ones are zero.
    uint256 internal immutable _count;
    address internal immutable _signer0;
    address internal immutable _signer1;
    address internal immutable _signer2;
    address internal immutable _signer3;
    address internal immutable _signer4;
    address internal immutable _signer5;
    address internal immutable _signer6;
    address internal immutable _signer7;
    uint8 internal immutable _threshold;
    uint32 internal immutable _maxReadAge;
    uint16 internal immutable _maxSlippageBps;
    /// @dev The domain separator at deploy, and the chain id it was made for: a fork with
    /// another chain id gets its own, so a signature made for one chain never counts on another.
    bytes32 internal immutable _deployDomain;
    uint256 internal immutable _deployChainId;

    /// @param a Validated by the deploying gate (1 to 8 strictly ascending non-zero signers).
    constructor(IRiskGate.Attestors memory a) {
        gate = msg.sender;
        address[] memory s = a.signers;
        uint256 n = s.length;
        _count = n;
        _signer0 = s[0];
        _signer1 = n > 1 ? s[1] : address(0);
        _signer2 = n > 2 ? s[2] : address(0);
        _signer3 = n > 3 ? s[3] : address(0);
        _signer4 = n > 4 ? s[4] : address(0);
        _signer5 = n > 5 ? s[5] : address(0);
        _signer6 = n > 6 ? s[6] : address(0);
        _signer7 = n > 7 ? s[7] : address(0);
        _threshold = a.threshold;
        _maxReadAge = a.maxReadAge;
        _maxSlippageBps = a.maxSlippageBps;
        _deployDomain = Attestation.domainSeparator(msg.sender);
        _deployChainId = block.chainid;
    }

    /// @inheritdoc IAttestorSet
    function attestors() external view returns (IRiskGate.Attestors memory a) {
        a.signers = new address[](_count);
        address[8] memory all =
            [_signer0, _signer1, _signer2, _signer3, _signer4, _signer5, _signer6, _signer7];
        for (uint256 i; i < a.signers.length; ++i) {
            a.signers[i] = all[i];
        }
        a.threshold = _threshold;
        a.maxReadAge = _maxReadAge;
        a.maxSlippageBps = _maxSlippageBps;
    }

    /// @inheritdoc IAttestorSet
    function isAttestor(address who) public view returns (bool) {
        // Unused immutables are zero, and a zero signer (a signature that did not recover) is
        // never an attestor.
        if (who == address(0)) return false;
        return who == _signer0 || who == _signer1 || who == _signer2 || who == _signer3
            || who == _signer4 || who == _signer5 || who == _signer6 || who == _signer7;
    }

    /// @inheritdoc IAttestorSet
    function domainSeparator() public view returns (bytes32) {
        return block.chainid == _deployChainId ? _deployDomain : Attestation.domainSeparator(gate);
    }

    /// @inheritdoc IAttestorSet
    function tally(
        address market,
        uint64 readBlock,
        string[] calldata raws,
        bytes[] calldata sigs,
        IRiskGate.Quote calldata quote
    ) external view returns (IRiskGate.Judgment memory j) {
        if (raws.length != sigs.length || raws.length > GateLimits.MAX_ATTESTORS) {
            revert IRiskGate.AttestationShape(raws.length, sigs.length);
        }
        IRiskGate.AttestedRead memory read = _appendedRead(sigs);
        j.promptHash = read.promptHash;
        bytes memory template = _template(market, readBlock, read, quote);
        Tally memory t = _tally(raws, sigs, template);
        j.vote = t.vote;
        (j.reason, j.verdict, j.limit) = _judge(t.counts, raws.length, t.signed, readBlock, read);
        _show(j, raws, t.codes);
    }

    /// @dev The signed `Answer` of this call with its `answerHash` left to fill in.
    function _template(
        address market,
        uint64 readBlock,
        IRiskGate.AttestedRead memory read,
        IRiskGate.Quote calldata quote
    ) internal view returns (bytes memory) {
        return Attestation.answerTemplate(
            domainSeparator(),
            market,
            readBlock,
            read.promptHash,
            read.bestBid,
            read.bestAsk,
            quote.deadline
        );
    }

    /// @dev The answer the Decision's raw fields carry: the first giving the verdict taken, else
    /// the first sent; empty when none was.
    function _show(IRiskGate.Judgment memory j, string[] calldata raws, uint256 codes)
        internal
        pure
    {
        if (raws.length == 0) {
            j.hash = keccak256("");
            return;
        }
        string calldata raw = raws[_first(raws.length, codes, j.verdict)];
        (j.head, j.length, j.hash) =
        (VerdictParser.logged(raw), bytes(raw).length, keccak256(bytes(raw)));
    }

    /// @dev 21, 22 or 0 with the verdict taken and its price limit (see `tally`).
    function _judge(
        uint8[4] memory counts,
        uint256 answers,
        bool signed,
        uint64 readBlock,
        IRiskGate.AttestedRead memory read
    ) internal view returns (uint8 reason, uint8 verdict, uint256 limit) {
        // The gate checked readBlock <= block.number.
        if (!signed || answers < _threshold || block.number - readBlock > _maxReadAge) {
            return (Reason.unwrap(Reasons.NOT_ATTESTED), Verdict.unwrap(Verdicts.INVALID), 0);
        }
        (bool agreed, Verdict taken) = Attestation.winner(counts, _threshold);
        if (!agreed) return (Reason.unwrap(Reasons.ATTESTORS_DISAGREE), Verdict.unwrap(taken), 0);
        limit = Attestation.priceLimit(taken, read.bestBid, read.bestAsk, _maxSlippageBps);
        return (Reason.unwrap(Reasons.PASS), Verdict.unwrap(taken), limit);
    }

    /// @dev The `AttestedRead` after the arguments: the call data's last three words, once the
    /// arguments (whose last part is the last signature's bytes) have ended before them.
    function _appendedRead(bytes[] calldata sigs)
        internal
        pure
        returns (IRiskGate.AttestedRead memory read)
    {
        uint256 end;
        if (sigs.length == 0) {
            // The array's length word is the arguments' last.
            assembly ("memory-safe") {
                end := sigs.offset
            }
        } else {
            bytes calldata last = sigs[sigs.length - 1];
            assembly ("memory-safe") {
                end := add(last.offset, last.length)
            }
            // Padded to a whole word, counted from the arguments' start (after the selector).
            end = 4 + ((end - 4 + 31) & ~uint256(31));
        }
        // Offsets count from the call data's start, the selector included: arguments start at 4.
        uint256 readBytes = 3 * 32;
        if (msg.data.length < end + readBytes || (msg.data.length - 4) % 32 != 0) {
            revert IRiskGate.AttestedReadMissing(end, msg.data.length);
        }
        return abi.decode(msg.data[msg.data.length - readBytes:], (IRiskGate.AttestedRead));
    }

    /// @dev The first answer whose code in `codes` (one byte per answer, from `_tally`) is
    /// `verdict`, else the first (0).
    function _first(uint256 n, uint256 codes, uint8 verdict) internal pure returns (uint256) {
        for (uint256 i; i < n; ++i) {
            if ((codes >> (8 * i)) & 0xff == verdict) return i;
        }
        return 0;
    }

    /// @dev The reading of one call's answers, built answer by answer.
    struct Tally {
        bytes vote; // the published encoding (see `IRiskGate.Decision`)
        uint256 at; // where the next entry of `vote` starts
        uint8[4] counts; // per verdict code, UNPARSEABLE last
        bool signed; // every signer an attestor, each above the one before
        address previous; // the last signer read
        uint256 codes; // each answer's verdict code, one byte per answer
    }

    /// @dev Reads every answer and its signature into a `Tally`.
    function _tally(string[] calldata raws, bytes[] calldata sigs, bytes memory template)
        internal
        view
        returns (Tally memory t)
    {
        t.vote = new bytes(_voteSize(raws));
        t.at = 4;
        t.signed = true;
        for (uint256 i; i < raws.length; ++i) {
            _entry(t, i, raws[i], sigs[i], template);
        }
        bytes memory vote = t.vote;
        uint8[4] memory counts = t.counts;
        assembly ("memory-safe") {
            let p := add(vote, 0x20)
            mstore8(p, mload(counts))
            mstore8(add(p, 1), mload(add(counts, 0x20)))
            mstore8(add(p, 2), mload(add(counts, 0x40)))
            mstore8(add(p, 3), mload(add(counts, 0x60)))
        }
    }

    /// @dev A vote entry: signer (20 bytes), length (4), hash (32).
    uint256 private constant _ENTRY_BYTES = 56;

    function _headLength(uint256 length) private pure returns (uint256) {
        return length < VerdictParser.MAX_RAW_LENGTH ? length : VerdictParser.MAX_RAW_LENGTH;
    }

    /// @dev Four count bytes, then per answer its entry and its head.
    function _voteSize(string[] calldata raws) private pure returns (uint256 size) {
        size = 4;
        for (uint256 i; i < raws.length; ++i) {
            size += _ENTRY_BYTES + _headLength(bytes(raws[i]).length);
        }
    }

    /// @dev Reads answer `i`: its signer (checked against the set and the one before), its
    /// verdict code (counted), and writes its entry into the vote. Each word written ends inside
    /// the entry, so nothing past it is touched.
    function _entry(
        Tally memory t,
        uint256 i,
        string calldata raw,
        bytes calldata sig,
        bytes memory template
    ) private view {
        bytes32 answerHash = keccak256(bytes(raw));
        address who = Attestation.signer(Attestation.digest(template, answerHash), sig);
        if (who <= t.previous || !isAttestor(who)) t.signed = false;
        t.previous = who;
        _countVerdict(t, i, raw);
        t.at = _write(t.vote, t.at, who, raw, answerHash);
    }

    /// @dev Counts answer `i`'s verdict code (UNPARSEABLE when it does not parse).
    function _countVerdict(Tally memory t, uint256 i, string calldata raw) private pure {
        (bool ok, Verdict v) = VerdictParser.tryParse(raw);
        uint256 code = ok ? Verdict.unwrap(v) : Attestation.UNPARSEABLE;
        t.counts[code] += 1;
        t.codes |= code << (8 * i);
    }

    /// @dev Writes one entry at byte `at` of `vote`; returns where the next starts.
    function _write(
        bytes memory vote,
        uint256 at,
        address who,
        string calldata raw,
        bytes32 answerHash
    ) private pure returns (uint256) {
        uint256 length = bytes(raw).length;
        uint256 headLength = _headLength(length);
        assembly ("memory-safe") {
            let p := add(add(vote, 0x20), at)
            mstore(p, shl(96, who))
            mstore(add(p, 20), shl(224, length))
            mstore(add(p, 24), answerHash)
            calldatacopy(add(p, 56), raw.offset, headLength)
        }
        return at + _ENTRY_BYTES + headLength;
    }
}
