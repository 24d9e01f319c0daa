//! chnative's typed rows of the hits table, generated from `hits_columns.tsv` by
//! `gen_rows.py` (rerun it if the schema changes).
#![allow(non_snake_case)]

use crate::hits::HitsData;

/// chnative typed row with owned strings.
#[derive(chnative::Row)]
pub struct ChOwned {
    pub WatchID: i64,
    pub JavaEnable: i16,
    pub Title: String,
    pub GoodEvent: i16,
    pub EventTime: u32,
    pub EventDate: u16,
    pub CounterID: i32,
    pub ClientIP: i32,
    pub RegionID: i32,
    pub UserID: i64,
    pub CounterClass: i16,
    pub OS: i16,
    pub UserAgent: i16,
    pub URL: String,
    pub Referer: String,
    pub IsRefresh: i16,
    pub RefererCategoryID: i16,
    pub RefererRegionID: i32,
    pub URLCategoryID: i16,
    pub URLRegionID: i32,
    pub ResolutionWidth: i16,
    pub ResolutionHeight: i16,
    pub ResolutionDepth: i16,
    pub FlashMajor: i16,
    pub FlashMinor: i16,
    pub FlashMinor2: String,
    pub NetMajor: i16,
    pub NetMinor: i16,
    pub UserAgentMajor: i16,
    pub UserAgentMinor: String,
    pub CookieEnable: i16,
    pub JavascriptEnable: i16,
    pub IsMobile: i16,
    pub MobilePhone: i16,
    pub MobilePhoneModel: String,
    pub Params: String,
    pub IPNetworkID: i32,
    pub TraficSourceID: i16,
    pub SearchEngineID: i16,
    pub SearchPhrase: String,
    pub AdvEngineID: i16,
    pub IsArtifical: i16,
    pub WindowClientWidth: i16,
    pub WindowClientHeight: i16,
    pub ClientTimeZone: i16,
    pub ClientEventTime: u32,
    pub SilverlightVersion1: i16,
    pub SilverlightVersion2: i16,
    pub SilverlightVersion3: i32,
    pub SilverlightVersion4: i16,
    pub PageCharset: String,
    pub CodeVersion: i32,
    pub IsLink: i16,
    pub IsDownload: i16,
    pub IsNotBounce: i16,
    pub FUniqID: i64,
    pub OriginalURL: String,
    pub HID: i32,
    pub IsOldCounter: i16,
    pub IsEvent: i16,
    pub IsParameter: i16,
    pub DontCountHits: i16,
    pub WithHash: i16,
    pub HitColor: String,
    pub LocalEventTime: u32,
    pub Age: i16,
    pub Sex: i16,
    pub Income: i16,
    pub Interests: i16,
    pub Robotness: i16,
    pub RemoteIP: i32,
    pub WindowName: i32,
    pub OpenerName: i32,
    pub HistoryLength: i16,
    pub BrowserLanguage: String,
    pub BrowserCountry: String,
    pub SocialNetwork: String,
    pub SocialAction: String,
    pub HTTPError: i16,
    pub SendTiming: i32,
    pub DNSTiming: i32,
    pub ConnectTiming: i32,
    pub ResponseStartTiming: i32,
    pub ResponseEndTiming: i32,
    pub FetchTiming: i32,
    pub SocialSourceNetworkID: i16,
    pub SocialSourcePage: String,
    pub ParamPrice: i64,
    pub ParamOrderID: String,
    pub ParamCurrency: String,
    pub ParamCurrencyID: i16,
    pub OpenstatServiceName: String,
    pub OpenstatCampaignID: String,
    pub OpenstatAdID: String,
    pub OpenstatSourceID: String,
    pub UTMSource: String,
    pub UTMMedium: String,
    pub UTMCampaign: String,
    pub UTMContent: String,
    pub UTMTerm: String,
    pub FromTag: String,
    pub HasGCLID: i16,
    pub RefererHash: i64,
    pub URLHash: i64,
    pub CLID: i32,
}

impl ChOwned {
    /// Adds every value into the bench checksum.
    pub fn checksum(&self) -> u64 {
        let mut s = 0u64;
        s = s.wrapping_add(self.WatchID as u64);
        s = s.wrapping_add(self.JavaEnable as i64 as u64);
        s = s.wrapping_add(self.Title.len() as u64);
        s = s.wrapping_add(self.GoodEvent as i64 as u64);
        s = s.wrapping_add(self.EventTime as i64 as u64);
        s = s.wrapping_add(self.EventDate as i64 as u64);
        s = s.wrapping_add(self.CounterID as i64 as u64);
        s = s.wrapping_add(self.ClientIP as i64 as u64);
        s = s.wrapping_add(self.RegionID as i64 as u64);
        s = s.wrapping_add(self.UserID as u64);
        s = s.wrapping_add(self.CounterClass as i64 as u64);
        s = s.wrapping_add(self.OS as i64 as u64);
        s = s.wrapping_add(self.UserAgent as i64 as u64);
        s = s.wrapping_add(self.URL.len() as u64);
        s = s.wrapping_add(self.Referer.len() as u64);
        s = s.wrapping_add(self.IsRefresh as i64 as u64);
        s = s.wrapping_add(self.RefererCategoryID as i64 as u64);
        s = s.wrapping_add(self.RefererRegionID as i64 as u64);
        s = s.wrapping_add(self.URLCategoryID as i64 as u64);
        s = s.wrapping_add(self.URLRegionID as i64 as u64);
        s = s.wrapping_add(self.ResolutionWidth as i64 as u64);
        s = s.wrapping_add(self.ResolutionHeight as i64 as u64);
        s = s.wrapping_add(self.ResolutionDepth as i64 as u64);
        s = s.wrapping_add(self.FlashMajor as i64 as u64);
        s = s.wrapping_add(self.FlashMinor as i64 as u64);
        s = s.wrapping_add(self.FlashMinor2.len() as u64);
        s = s.wrapping_add(self.NetMajor as i64 as u64);
        s = s.wrapping_add(self.NetMinor as i64 as u64);
        s = s.wrapping_add(self.UserAgentMajor as i64 as u64);
        s = s.wrapping_add(self.UserAgentMinor.len() as u64);
        s = s.wrapping_add(self.CookieEnable as i64 as u64);
        s = s.wrapping_add(self.JavascriptEnable as i64 as u64);
        s = s.wrapping_add(self.IsMobile as i64 as u64);
        s = s.wrapping_add(self.MobilePhone as i64 as u64);
        s = s.wrapping_add(self.MobilePhoneModel.len() as u64);
        s = s.wrapping_add(self.Params.len() as u64);
        s = s.wrapping_add(self.IPNetworkID as i64 as u64);
        s = s.wrapping_add(self.TraficSourceID as i64 as u64);
        s = s.wrapping_add(self.SearchEngineID as i64 as u64);
        s = s.wrapping_add(self.SearchPhrase.len() as u64);
        s = s.wrapping_add(self.AdvEngineID as i64 as u64);
        s = s.wrapping_add(self.IsArtifical as i64 as u64);
        s = s.wrapping_add(self.WindowClientWidth as i64 as u64);
        s = s.wrapping_add(self.WindowClientHeight as i64 as u64);
        s = s.wrapping_add(self.ClientTimeZone as i64 as u64);
        s = s.wrapping_add(self.ClientEventTime as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion1 as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion2 as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion3 as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion4 as i64 as u64);
        s = s.wrapping_add(self.PageCharset.len() as u64);
        s = s.wrapping_add(self.CodeVersion as i64 as u64);
        s = s.wrapping_add(self.IsLink as i64 as u64);
        s = s.wrapping_add(self.IsDownload as i64 as u64);
        s = s.wrapping_add(self.IsNotBounce as i64 as u64);
        s = s.wrapping_add(self.FUniqID as u64);
        s = s.wrapping_add(self.OriginalURL.len() as u64);
        s = s.wrapping_add(self.HID as i64 as u64);
        s = s.wrapping_add(self.IsOldCounter as i64 as u64);
        s = s.wrapping_add(self.IsEvent as i64 as u64);
        s = s.wrapping_add(self.IsParameter as i64 as u64);
        s = s.wrapping_add(self.DontCountHits as i64 as u64);
        s = s.wrapping_add(self.WithHash as i64 as u64);
        s = s.wrapping_add(self.HitColor.len() as u64);
        s = s.wrapping_add(self.LocalEventTime as i64 as u64);
        s = s.wrapping_add(self.Age as i64 as u64);
        s = s.wrapping_add(self.Sex as i64 as u64);
        s = s.wrapping_add(self.Income as i64 as u64);
        s = s.wrapping_add(self.Interests as i64 as u64);
        s = s.wrapping_add(self.Robotness as i64 as u64);
        s = s.wrapping_add(self.RemoteIP as i64 as u64);
        s = s.wrapping_add(self.WindowName as i64 as u64);
        s = s.wrapping_add(self.OpenerName as i64 as u64);
        s = s.wrapping_add(self.HistoryLength as i64 as u64);
        s = s.wrapping_add(self.BrowserLanguage.len() as u64);
        s = s.wrapping_add(self.BrowserCountry.len() as u64);
        s = s.wrapping_add(self.SocialNetwork.len() as u64);
        s = s.wrapping_add(self.SocialAction.len() as u64);
        s = s.wrapping_add(self.HTTPError as i64 as u64);
        s = s.wrapping_add(self.SendTiming as i64 as u64);
        s = s.wrapping_add(self.DNSTiming as i64 as u64);
        s = s.wrapping_add(self.ConnectTiming as i64 as u64);
        s = s.wrapping_add(self.ResponseStartTiming as i64 as u64);
        s = s.wrapping_add(self.ResponseEndTiming as i64 as u64);
        s = s.wrapping_add(self.FetchTiming as i64 as u64);
        s = s.wrapping_add(self.SocialSourceNetworkID as i64 as u64);
        s = s.wrapping_add(self.SocialSourcePage.len() as u64);
        s = s.wrapping_add(self.ParamPrice as u64);
        s = s.wrapping_add(self.ParamOrderID.len() as u64);
        s = s.wrapping_add(self.ParamCurrency.len() as u64);
        s = s.wrapping_add(self.ParamCurrencyID as i64 as u64);
        s = s.wrapping_add(self.OpenstatServiceName.len() as u64);
        s = s.wrapping_add(self.OpenstatCampaignID.len() as u64);
        s = s.wrapping_add(self.OpenstatAdID.len() as u64);
        s = s.wrapping_add(self.OpenstatSourceID.len() as u64);
        s = s.wrapping_add(self.UTMSource.len() as u64);
        s = s.wrapping_add(self.UTMMedium.len() as u64);
        s = s.wrapping_add(self.UTMCampaign.len() as u64);
        s = s.wrapping_add(self.UTMContent.len() as u64);
        s = s.wrapping_add(self.UTMTerm.len() as u64);
        s = s.wrapping_add(self.FromTag.len() as u64);
        s = s.wrapping_add(self.HasGCLID as i64 as u64);
        s = s.wrapping_add(self.RefererHash as u64);
        s = s.wrapping_add(self.URLHash as u64);
        s = s.wrapping_add(self.CLID as i64 as u64);
        s
    }
}

/// chnative typed row with borrowed strings.
#[derive(chnative::Row)]
pub struct ChBorrowed<'a> {
    pub WatchID: i64,
    pub JavaEnable: i16,
    pub Title: &'a str,
    pub GoodEvent: i16,
    pub EventTime: u32,
    pub EventDate: u16,
    pub CounterID: i32,
    pub ClientIP: i32,
    pub RegionID: i32,
    pub UserID: i64,
    pub CounterClass: i16,
    pub OS: i16,
    pub UserAgent: i16,
    pub URL: &'a str,
    pub Referer: &'a str,
    pub IsRefresh: i16,
    pub RefererCategoryID: i16,
    pub RefererRegionID: i32,
    pub URLCategoryID: i16,
    pub URLRegionID: i32,
    pub ResolutionWidth: i16,
    pub ResolutionHeight: i16,
    pub ResolutionDepth: i16,
    pub FlashMajor: i16,
    pub FlashMinor: i16,
    pub FlashMinor2: &'a str,
    pub NetMajor: i16,
    pub NetMinor: i16,
    pub UserAgentMajor: i16,
    pub UserAgentMinor: &'a str,
    pub CookieEnable: i16,
    pub JavascriptEnable: i16,
    pub IsMobile: i16,
    pub MobilePhone: i16,
    pub MobilePhoneModel: &'a str,
    pub Params: &'a str,
    pub IPNetworkID: i32,
    pub TraficSourceID: i16,
    pub SearchEngineID: i16,
    pub SearchPhrase: &'a str,
    pub AdvEngineID: i16,
    pub IsArtifical: i16,
    pub WindowClientWidth: i16,
    pub WindowClientHeight: i16,
    pub ClientTimeZone: i16,
    pub ClientEventTime: u32,
    pub SilverlightVersion1: i16,
    pub SilverlightVersion2: i16,
    pub SilverlightVersion3: i32,
    pub SilverlightVersion4: i16,
    pub PageCharset: &'a str,
    pub CodeVersion: i32,
    pub IsLink: i16,
    pub IsDownload: i16,
    pub IsNotBounce: i16,
    pub FUniqID: i64,
    pub OriginalURL: &'a str,
    pub HID: i32,
    pub IsOldCounter: i16,
    pub IsEvent: i16,
    pub IsParameter: i16,
    pub DontCountHits: i16,
    pub WithHash: i16,
    pub HitColor: &'a str,
    pub LocalEventTime: u32,
    pub Age: i16,
    pub Sex: i16,
    pub Income: i16,
    pub Interests: i16,
    pub Robotness: i16,
    pub RemoteIP: i32,
    pub WindowName: i32,
    pub OpenerName: i32,
    pub HistoryLength: i16,
    pub BrowserLanguage: &'a str,
    pub BrowserCountry: &'a str,
    pub SocialNetwork: &'a str,
    pub SocialAction: &'a str,
    pub HTTPError: i16,
    pub SendTiming: i32,
    pub DNSTiming: i32,
    pub ConnectTiming: i32,
    pub ResponseStartTiming: i32,
    pub ResponseEndTiming: i32,
    pub FetchTiming: i32,
    pub SocialSourceNetworkID: i16,
    pub SocialSourcePage: &'a str,
    pub ParamPrice: i64,
    pub ParamOrderID: &'a str,
    pub ParamCurrency: &'a str,
    pub ParamCurrencyID: i16,
    pub OpenstatServiceName: &'a str,
    pub OpenstatCampaignID: &'a str,
    pub OpenstatAdID: &'a str,
    pub OpenstatSourceID: &'a str,
    pub UTMSource: &'a str,
    pub UTMMedium: &'a str,
    pub UTMCampaign: &'a str,
    pub UTMContent: &'a str,
    pub UTMTerm: &'a str,
    pub FromTag: &'a str,
    pub HasGCLID: i16,
    pub RefererHash: i64,
    pub URLHash: i64,
    pub CLID: i32,
}

impl<'a> ChBorrowed<'a> {
    /// Adds every value into the bench checksum.
    pub fn checksum(&self) -> u64 {
        let mut s = 0u64;
        s = s.wrapping_add(self.WatchID as u64);
        s = s.wrapping_add(self.JavaEnable as i64 as u64);
        s = s.wrapping_add(self.Title.len() as u64);
        s = s.wrapping_add(self.GoodEvent as i64 as u64);
        s = s.wrapping_add(self.EventTime as i64 as u64);
        s = s.wrapping_add(self.EventDate as i64 as u64);
        s = s.wrapping_add(self.CounterID as i64 as u64);
        s = s.wrapping_add(self.ClientIP as i64 as u64);
        s = s.wrapping_add(self.RegionID as i64 as u64);
        s = s.wrapping_add(self.UserID as u64);
        s = s.wrapping_add(self.CounterClass as i64 as u64);
        s = s.wrapping_add(self.OS as i64 as u64);
        s = s.wrapping_add(self.UserAgent as i64 as u64);
        s = s.wrapping_add(self.URL.len() as u64);
        s = s.wrapping_add(self.Referer.len() as u64);
        s = s.wrapping_add(self.IsRefresh as i64 as u64);
        s = s.wrapping_add(self.RefererCategoryID as i64 as u64);
        s = s.wrapping_add(self.RefererRegionID as i64 as u64);
        s = s.wrapping_add(self.URLCategoryID as i64 as u64);
        s = s.wrapping_add(self.URLRegionID as i64 as u64);
        s = s.wrapping_add(self.ResolutionWidth as i64 as u64);
        s = s.wrapping_add(self.ResolutionHeight as i64 as u64);
        s = s.wrapping_add(self.ResolutionDepth as i64 as u64);
        s = s.wrapping_add(self.FlashMajor as i64 as u64);
        s = s.wrapping_add(self.FlashMinor as i64 as u64);
        s = s.wrapping_add(self.FlashMinor2.len() as u64);
        s = s.wrapping_add(self.NetMajor as i64 as u64);
        s = s.wrapping_add(self.NetMinor as i64 as u64);
        s = s.wrapping_add(self.UserAgentMajor as i64 as u64);
        s = s.wrapping_add(self.UserAgentMinor.len() as u64);
        s = s.wrapping_add(self.CookieEnable as i64 as u64);
        s = s.wrapping_add(self.JavascriptEnable as i64 as u64);
        s = s.wrapping_add(self.IsMobile as i64 as u64);
        s = s.wrapping_add(self.MobilePhone as i64 as u64);
        s = s.wrapping_add(self.MobilePhoneModel.len() as u64);
        s = s.wrapping_add(self.Params.len() as u64);
        s = s.wrapping_add(self.IPNetworkID as i64 as u64);
        s = s.wrapping_add(self.TraficSourceID as i64 as u64);
        s = s.wrapping_add(self.SearchEngineID as i64 as u64);
        s = s.wrapping_add(self.SearchPhrase.len() as u64);
        s = s.wrapping_add(self.AdvEngineID as i64 as u64);
        s = s.wrapping_add(self.IsArtifical as i64 as u64);
        s = s.wrapping_add(self.WindowClientWidth as i64 as u64);
        s = s.wrapping_add(self.WindowClientHeight as i64 as u64);
        s = s.wrapping_add(self.ClientTimeZone as i64 as u64);
        s = s.wrapping_add(self.ClientEventTime as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion1 as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion2 as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion3 as i64 as u64);
        s = s.wrapping_add(self.SilverlightVersion4 as i64 as u64);
        s = s.wrapping_add(self.PageCharset.len() as u64);
        s = s.wrapping_add(self.CodeVersion as i64 as u64);
        s = s.wrapping_add(self.IsLink as i64 as u64);
        s = s.wrapping_add(self.IsDownload as i64 as u64);
        s = s.wrapping_add(self.IsNotBounce as i64 as u64);
        s = s.wrapping_add(self.FUniqID as u64);
        s = s.wrapping_add(self.OriginalURL.len() as u64);
        s = s.wrapping_add(self.HID as i64 as u64);
        s = s.wrapping_add(self.IsOldCounter as i64 as u64);
        s = s.wrapping_add(self.IsEvent as i64 as u64);
        s = s.wrapping_add(self.IsParameter as i64 as u64);
        s = s.wrapping_add(self.DontCountHits as i64 as u64);
        s = s.wrapping_add(self.WithHash as i64 as u64);
        s = s.wrapping_add(self.HitColor.len() as u64);
        s = s.wrapping_add(self.LocalEventTime as i64 as u64);
        s = s.wrapping_add(self.Age as i64 as u64);
        s = s.wrapping_add(self.Sex as i64 as u64);
        s = s.wrapping_add(self.Income as i64 as u64);
        s = s.wrapping_add(self.Interests as i64 as u64);
        s = s.wrapping_add(self.Robotness as i64 as u64);
        s = s.wrapping_add(self.RemoteIP as i64 as u64);
        s = s.wrapping_add(self.WindowName as i64 as u64);
        s = s.wrapping_add(self.OpenerName as i64 as u64);
        s = s.wrapping_add(self.HistoryLength as i64 as u64);
        s = s.wrapping_add(self.BrowserLanguage.len() as u64);
        s = s.wrapping_add(self.BrowserCountry.len() as u64);
        s = s.wrapping_add(self.SocialNetwork.len() as u64);
        s = s.wrapping_add(self.SocialAction.len() as u64);
        s = s.wrapping_add(self.HTTPError as i64 as u64);
        s = s.wrapping_add(self.SendTiming as i64 as u64);
        s = s.wrapping_add(self.DNSTiming as i64 as u64);
        s = s.wrapping_add(self.ConnectTiming as i64 as u64);
        s = s.wrapping_add(self.ResponseStartTiming as i64 as u64);
        s = s.wrapping_add(self.ResponseEndTiming as i64 as u64);
        s = s.wrapping_add(self.FetchTiming as i64 as u64);
        s = s.wrapping_add(self.SocialSourceNetworkID as i64 as u64);
        s = s.wrapping_add(self.SocialSourcePage.len() as u64);
        s = s.wrapping_add(self.ParamPrice as u64);
        s = s.wrapping_add(self.ParamOrderID.len() as u64);
        s = s.wrapping_add(self.ParamCurrency.len() as u64);
        s = s.wrapping_add(self.ParamCurrencyID as i64 as u64);
        s = s.wrapping_add(self.OpenstatServiceName.len() as u64);
        s = s.wrapping_add(self.OpenstatCampaignID.len() as u64);
        s = s.wrapping_add(self.OpenstatAdID.len() as u64);
        s = s.wrapping_add(self.OpenstatSourceID.len() as u64);
        s = s.wrapping_add(self.UTMSource.len() as u64);
        s = s.wrapping_add(self.UTMMedium.len() as u64);
        s = s.wrapping_add(self.UTMCampaign.len() as u64);
        s = s.wrapping_add(self.UTMContent.len() as u64);
        s = s.wrapping_add(self.UTMTerm.len() as u64);
        s = s.wrapping_add(self.FromTag.len() as u64);
        s = s.wrapping_add(self.HasGCLID as i64 as u64);
        s = s.wrapping_add(self.RefererHash as u64);
        s = s.wrapping_add(self.URLHash as u64);
        s = s.wrapping_add(self.CLID as i64 as u64);
        s
    }
}

impl<'a> ChBorrowed<'a> {
    /// Row `i` of the columns, borrowing their strings.
    pub fn of(d: &'a HitsData, i: usize) -> Self {
        ChBorrowed {
            WatchID: d.i64(0)[i],
            JavaEnable: d.i16(1)[i],
            Title: d.str(2)[i].as_str(),
            GoodEvent: d.i16(3)[i],
            EventTime: d.datetime(4)[i],
            EventDate: d.date(5)[i],
            CounterID: d.i32(6)[i],
            ClientIP: d.i32(7)[i],
            RegionID: d.i32(8)[i],
            UserID: d.i64(9)[i],
            CounterClass: d.i16(10)[i],
            OS: d.i16(11)[i],
            UserAgent: d.i16(12)[i],
            URL: d.str(13)[i].as_str(),
            Referer: d.str(14)[i].as_str(),
            IsRefresh: d.i16(15)[i],
            RefererCategoryID: d.i16(16)[i],
            RefererRegionID: d.i32(17)[i],
            URLCategoryID: d.i16(18)[i],
            URLRegionID: d.i32(19)[i],
            ResolutionWidth: d.i16(20)[i],
            ResolutionHeight: d.i16(21)[i],
            ResolutionDepth: d.i16(22)[i],
            FlashMajor: d.i16(23)[i],
            FlashMinor: d.i16(24)[i],
            FlashMinor2: d.str(25)[i].as_str(),
            NetMajor: d.i16(26)[i],
            NetMinor: d.i16(27)[i],
            UserAgentMajor: d.i16(28)[i],
            UserAgentMinor: d.str(29)[i].as_str(),
            CookieEnable: d.i16(30)[i],
            JavascriptEnable: d.i16(31)[i],
            IsMobile: d.i16(32)[i],
            MobilePhone: d.i16(33)[i],
            MobilePhoneModel: d.str(34)[i].as_str(),
            Params: d.str(35)[i].as_str(),
            IPNetworkID: d.i32(36)[i],
            TraficSourceID: d.i16(37)[i],
            SearchEngineID: d.i16(38)[i],
            SearchPhrase: d.str(39)[i].as_str(),
            AdvEngineID: d.i16(40)[i],
            IsArtifical: d.i16(41)[i],
            WindowClientWidth: d.i16(42)[i],
            WindowClientHeight: d.i16(43)[i],
            ClientTimeZone: d.i16(44)[i],
            ClientEventTime: d.datetime(45)[i],
            SilverlightVersion1: d.i16(46)[i],
            SilverlightVersion2: d.i16(47)[i],
            SilverlightVersion3: d.i32(48)[i],
            SilverlightVersion4: d.i16(49)[i],
            PageCharset: d.str(50)[i].as_str(),
            CodeVersion: d.i32(51)[i],
            IsLink: d.i16(52)[i],
            IsDownload: d.i16(53)[i],
            IsNotBounce: d.i16(54)[i],
            FUniqID: d.i64(55)[i],
            OriginalURL: d.str(56)[i].as_str(),
            HID: d.i32(57)[i],
            IsOldCounter: d.i16(58)[i],
            IsEvent: d.i16(59)[i],
            IsParameter: d.i16(60)[i],
            DontCountHits: d.i16(61)[i],
            WithHash: d.i16(62)[i],
            HitColor: d.str(63)[i].as_str(),
            LocalEventTime: d.datetime(64)[i],
            Age: d.i16(65)[i],
            Sex: d.i16(66)[i],
            Income: d.i16(67)[i],
            Interests: d.i16(68)[i],
            Robotness: d.i16(69)[i],
            RemoteIP: d.i32(70)[i],
            WindowName: d.i32(71)[i],
            OpenerName: d.i32(72)[i],
            HistoryLength: d.i16(73)[i],
            BrowserLanguage: d.str(74)[i].as_str(),
            BrowserCountry: d.str(75)[i].as_str(),
            SocialNetwork: d.str(76)[i].as_str(),
            SocialAction: d.str(77)[i].as_str(),
            HTTPError: d.i16(78)[i],
            SendTiming: d.i32(79)[i],
            DNSTiming: d.i32(80)[i],
            ConnectTiming: d.i32(81)[i],
            ResponseStartTiming: d.i32(82)[i],
            ResponseEndTiming: d.i32(83)[i],
            FetchTiming: d.i32(84)[i],
            SocialSourceNetworkID: d.i16(85)[i],
            SocialSourcePage: d.str(86)[i].as_str(),
            ParamPrice: d.i64(87)[i],
            ParamOrderID: d.str(88)[i].as_str(),
            ParamCurrency: d.str(89)[i].as_str(),
            ParamCurrencyID: d.i16(90)[i],
            OpenstatServiceName: d.str(91)[i].as_str(),
            OpenstatCampaignID: d.str(92)[i].as_str(),
            OpenstatAdID: d.str(93)[i].as_str(),
            OpenstatSourceID: d.str(94)[i].as_str(),
            UTMSource: d.str(95)[i].as_str(),
            UTMMedium: d.str(96)[i].as_str(),
            UTMCampaign: d.str(97)[i].as_str(),
            UTMContent: d.str(98)[i].as_str(),
            UTMTerm: d.str(99)[i].as_str(),
            FromTag: d.str(100)[i].as_str(),
            HasGCLID: d.i16(101)[i],
            RefererHash: d.i64(102)[i],
            URLHash: d.i64(103)[i],
            CLID: d.i32(104)[i],
        }
    }

    /// The same row, borrowing an owned one's strings (for the tiers bin).
    #[allow(dead_code)]
    pub fn from_owned(r: &'a ChOwned) -> Self {
        ChBorrowed {
            WatchID: r.WatchID,
            JavaEnable: r.JavaEnable,
            Title: &r.Title,
            GoodEvent: r.GoodEvent,
            EventTime: r.EventTime,
            EventDate: r.EventDate,
            CounterID: r.CounterID,
            ClientIP: r.ClientIP,
            RegionID: r.RegionID,
            UserID: r.UserID,
            CounterClass: r.CounterClass,
            OS: r.OS,
            UserAgent: r.UserAgent,
            URL: &r.URL,
            Referer: &r.Referer,
            IsRefresh: r.IsRefresh,
            RefererCategoryID: r.RefererCategoryID,
            RefererRegionID: r.RefererRegionID,
            URLCategoryID: r.URLCategoryID,
            URLRegionID: r.URLRegionID,
            ResolutionWidth: r.ResolutionWidth,
            ResolutionHeight: r.ResolutionHeight,
            ResolutionDepth: r.ResolutionDepth,
            FlashMajor: r.FlashMajor,
            FlashMinor: r.FlashMinor,
            FlashMinor2: &r.FlashMinor2,
            NetMajor: r.NetMajor,
            NetMinor: r.NetMinor,
            UserAgentMajor: r.UserAgentMajor,
            UserAgentMinor: &r.UserAgentMinor,
            CookieEnable: r.CookieEnable,
            JavascriptEnable: r.JavascriptEnable,
            IsMobile: r.IsMobile,
            MobilePhone: r.MobilePhone,
            MobilePhoneModel: &r.MobilePhoneModel,
            Params: &r.Params,
            IPNetworkID: r.IPNetworkID,
            TraficSourceID: r.TraficSourceID,
            SearchEngineID: r.SearchEngineID,
            SearchPhrase: &r.SearchPhrase,
            AdvEngineID: r.AdvEngineID,
            IsArtifical: r.IsArtifical,
            WindowClientWidth: r.WindowClientWidth,
            WindowClientHeight: r.WindowClientHeight,
            ClientTimeZone: r.ClientTimeZone,
            ClientEventTime: r.ClientEventTime,
            SilverlightVersion1: r.SilverlightVersion1,
            SilverlightVersion2: r.SilverlightVersion2,
            SilverlightVersion3: r.SilverlightVersion3,
            SilverlightVersion4: r.SilverlightVersion4,
            PageCharset: &r.PageCharset,
            CodeVersion: r.CodeVersion,
            IsLink: r.IsLink,
            IsDownload: r.IsDownload,
            IsNotBounce: r.IsNotBounce,
            FUniqID: r.FUniqID,
            OriginalURL: &r.OriginalURL,
            HID: r.HID,
            IsOldCounter: r.IsOldCounter,
            IsEvent: r.IsEvent,
            IsParameter: r.IsParameter,
            DontCountHits: r.DontCountHits,
            WithHash: r.WithHash,
            HitColor: &r.HitColor,
            LocalEventTime: r.LocalEventTime,
            Age: r.Age,
            Sex: r.Sex,
            Income: r.Income,
            Interests: r.Interests,
            Robotness: r.Robotness,
            RemoteIP: r.RemoteIP,
            WindowName: r.WindowName,
            OpenerName: r.OpenerName,
            HistoryLength: r.HistoryLength,
            BrowserLanguage: &r.BrowserLanguage,
            BrowserCountry: &r.BrowserCountry,
            SocialNetwork: &r.SocialNetwork,
            SocialAction: &r.SocialAction,
            HTTPError: r.HTTPError,
            SendTiming: r.SendTiming,
            DNSTiming: r.DNSTiming,
            ConnectTiming: r.ConnectTiming,
            ResponseStartTiming: r.ResponseStartTiming,
            ResponseEndTiming: r.ResponseEndTiming,
            FetchTiming: r.FetchTiming,
            SocialSourceNetworkID: r.SocialSourceNetworkID,
            SocialSourcePage: &r.SocialSourcePage,
            ParamPrice: r.ParamPrice,
            ParamOrderID: &r.ParamOrderID,
            ParamCurrency: &r.ParamCurrency,
            ParamCurrencyID: r.ParamCurrencyID,
            OpenstatServiceName: &r.OpenstatServiceName,
            OpenstatCampaignID: &r.OpenstatCampaignID,
            OpenstatAdID: &r.OpenstatAdID,
            OpenstatSourceID: &r.OpenstatSourceID,
            UTMSource: &r.UTMSource,
            UTMMedium: &r.UTMMedium,
            UTMCampaign: &r.UTMCampaign,
            UTMContent: &r.UTMContent,
            UTMTerm: &r.UTMTerm,
            FromTag: &r.FromTag,
            HasGCLID: r.HasGCLID,
            RefererHash: r.RefererHash,
            URLHash: r.URLHash,
            CLID: r.CLID,
        }
    }
}
